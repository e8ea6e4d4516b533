#!/usr/bin/env python3
"""The tests' independent S3 client (boto3): reads what ingestd wrote, prints JSON.

Reaches the server named by AWS_ENDPOINT_URL_S3 with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
  ready BUCKET               exit 0 once the bucket answers
  head BUCKET KEY            {"size", "etag", "content_type", "cache_control"} or null
  get BUCKET KEY FILE        writes the object to FILE, prints its size
  put BUCKET KEY FILE [TYPE] uploads FILE (with Content-Type TYPE), prints the ETag
  list BUCKET PREFIX         [keys]
  pending BUCKET [PREFIX]    [[key, upload id]] of multipart uploads in progress (every page)
  start-upload BUCKET KEY…   begins a multipart upload of each KEY and uploads its first part
                             (8 at a time), prints [[key, upload id]]
"""
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import boto3
import botocore


def client():
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL_S3"],
                        config=botocore.config.Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"},
                                                      max_pool_connections=16))


def main(command, *args):
    s3 = client()
    if command == "ready":
        s3.head_bucket(Bucket=args[0])
        print("true")
    elif command == "head":
        try:
            h = s3.head_object(Bucket=args[0], Key=args[1])
        except botocore.exceptions.ClientError as error:
            if error.response["ResponseMetadata"]["HTTPStatusCode"] == 404:
                print("null")
                return
            raise
        print(json.dumps({"size": h["ContentLength"], "etag": h["ETag"], "content_type": h.get("ContentType"),
                          "cache_control": h.get("CacheControl")}))
    elif command == "get":
        s3.download_file(args[0], args[1], args[2])
        print(os.path.getsize(args[2]))
    elif command == "put":
        with open(args[2], "rb") as body:
            extra = {"ContentType": args[3]} if len(args) > 3 else {}
            print(json.dumps(s3.put_object(Bucket=args[0], Key=args[1], Body=body, **extra)["ETag"]))
    elif command == "list":
        keys = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=args[0], Prefix=args[1]):
            keys += [item["Key"] for item in page.get("Contents", [])]
        print(json.dumps(keys))
    elif command == "pending":
        uploads = []
        for page in s3.get_paginator("list_multipart_uploads").paginate(Bucket=args[0], Prefix=args[1] if len(args) > 1 else ""):
            uploads += [[u["Key"], u["UploadId"]] for u in page.get("Uploads", [])]
        print(json.dumps(uploads))
    elif command == "start-upload":
        def start(key):
            upload = s3.create_multipart_upload(Bucket=args[0], Key=key)["UploadId"]
            s3.upload_part(Bucket=args[0], Key=key, UploadId=upload, PartNumber=1, Body=b"part one of an attempt that died")
            return [key, upload]
        with ThreadPoolExecutor(8) as pool:
            print(json.dumps(list(pool.map(start, args[1:]))))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    try:
        main(*sys.argv[1:])
    except (botocore.exceptions.ClientError, botocore.exceptions.EndpointConnectionError) as error:
        sys.exit(str(error))
