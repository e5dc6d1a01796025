pub mod cases;
#[allow(dead_code)]
pub mod foreign;
pub mod readers;
#[allow(dead_code)]
pub mod served;
