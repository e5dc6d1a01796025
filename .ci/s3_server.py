"""An S3 API server for the tests: moto's S3 on 127.0.0.1, one request at a time.

moto checks `If-None-Match: *` and then writes, which two threads could
interleave; serializing requests makes put-if-absent atomic, as on S3.

Usage: s3_server.py PORT BUCKET   (prints "ready" once BUCKET and BUCKET-other exist;
the second bucket is for statements that name another bucket of the same store)
"""
import sys
import threading

import boto3
from werkzeug.serving import make_server
from moto.server import DomainDispatcherApplication, create_backend_app
from moto.moto_server.werkzeug_app import MotoRequestHandler

lock = threading.Lock()
app = DomainDispatcherApplication(create_backend_app)


def serialized(environ, start_response):
    with lock:
        body = app(environ, start_response)
        try:
            return [b"".join(body)]
        finally:
            if hasattr(body, "close"):
                body.close()


if __name__ == "__main__":
    port, bucket = int(sys.argv[1]), sys.argv[2]
    server = make_server("127.0.0.1", port, serialized, threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{port}",
        aws_access_key_id="hp-test-key",
        aws_secret_access_key="hp-test-secret",
        region_name="us-east-1",
    )
    for name in (bucket, f"{bucket}-other"):
        client.create_bucket(Bucket=name)
    print("ready", flush=True)
    thread.join()
