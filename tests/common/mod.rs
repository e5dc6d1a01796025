pub mod foreign;
