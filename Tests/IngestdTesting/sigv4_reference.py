#!/usr/bin/env python3
"""botocore's own SigV4 for S3, as the reference the signer is checked against byte for byte.

Reads one JSON request per line on stdin ({"method", "url", "headers": [[name, value]], "body",
"access", "secret", "token", "region", "time": epoch seconds, "presign": expires or null}) and
prints one JSON line: {"headers": {...}} (S3SigV4Auth) or {"url": "..."} (S3SigV4QueryAuth).
"""
import datetime
import json
import sys

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

for line in sys.stdin:
    spec = json.loads(line)
    moment = datetime.datetime.fromtimestamp(spec["time"], datetime.timezone.utc).replace(tzinfo=None)
    botocore.auth.get_current_datetime = lambda moment=moment: moment
    credentials = Credentials(spec["access"], spec["secret"], spec.get("token"))
    request = AWSRequest(method=spec["method"], url=spec["url"], headers=dict(spec.get("headers", [])),
                         data=spec.get("body", "").encode())
    if spec.get("presign"):
        botocore.auth.S3SigV4QueryAuth(credentials, "s3", spec["region"], expires=spec["presign"]).add_auth(request)
        print(json.dumps({"url": request.url}), flush=True)
    else:
        botocore.auth.S3SigV4Auth(credentials, "s3", spec["region"]).add_auth(request)
        print(json.dumps({"headers": {k: v for k, v in request.headers.items()}}), flush=True)
