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
  read-growing BUCKET PREFIX SECONDS
                             reads a video growing in the bucket (see read_growing)
  serve                      one client for many commands: reads one JSON array (a command and
                             its arguments) a line from stdin, answers each with one JSON line,
                             {"output": what the command printed} or {"error": why it failed}
"""
import contextlib
import io
import json
import os
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor

import boto3
import botocore


def client():
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL_S3"],
                        config=botocore.config.Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"},
                                                      max_pool_connections=16))


def main(s3, command, *args):
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
    elif command == "read-growing":
        print(json.dumps(read_growing(s3, args[0], args[1], float(args[2]))))
    else:
        sys.exit(f"unknown command {command}")


def read_growing(s3, bucket, prefix, timeout):
    """A reader of a video growing in a bucket (#41), polling as fast as it can until the video is
    done: `<prefix>/current.json` names the version; every version of every media playlist seen
    must extend the one before, and every object it names must be there, whole (the bytes it has
    at the end); growing playlists must be `no-cache` and media immutable."""
    import hashlib
    import time
    deadline = time.monotonic() + timeout
    report = {"problems": [], "playlist_versions": 0, "growing_seen": 0, "objects_checked": 0,
              "playlist_cache": [], "media_cache": []}

    def get(key):
        try:
            answer = s3.get_object(Bucket=bucket, Key=key)
        except botocore.exceptions.ClientError as error:
            if error.response["ResponseMetadata"]["HTTPStatusCode"] == 404:
                return None, None
            raise
        return answer["Body"].read(), answer.get("CacheControl")

    version = None
    while version is None:
        if time.monotonic() > deadline:
            report["problems"].append("no current.json")
            return report
        body, _ = get(f"{prefix}/current.json")
        version = json.loads(body)["version"] if body else None
    report["version"] = version
    base = f"{prefix}/{version}"
    report["manifest_at_show"] = get(f"{base}/manifest.json")[0] is not None
    seen, digests = {}, {}
    while time.monotonic() < deadline:
        done = get(f"{base}/manifest.json")[0] is not None
        master, _ = get(f"{base}/master.m3u8")
        if master is None:
            report["problems"].append("current.json names a version without a master")
            break
        for variant in [l for l in master.decode().splitlines() if l and not l.startswith("#")]:
            text, cache = get(f"{base}/{variant}")
            if text is None:
                report["problems"].append(f"the master names {variant}, which is not there")
                continue
            text = text.decode()
            previous = seen.get(variant)
            if previous == text:
                continue
            if previous is not None and not text.startswith(previous):
                report["problems"].append(f"{variant}: a version that does not extend the one before")
            seen[variant] = text
            report["playlist_versions"] += 1
            if "#EXT-X-ENDLIST" not in text:
                report["growing_seen"] += 1
                report["playlist_cache"] = sorted(set(report["playlist_cache"]) | {cache or ""})
            directory = variant.rsplit("/", 1)[0]
            names = [l for l in text.splitlines() if l and not l.startswith("#")]
            names += [l.split('URI="', 1)[1].split('"', 1)[0] for l in text.splitlines() if 'URI="' in l]
            for name in names:
                key = f"{base}/{directory}/{name}"
                if key in digests:
                    continue
                data, media_cache = get(key)
                if data is None:
                    report["problems"].append(f"{variant} names {name}, which is not there")
                    continue
                digests[key] = hashlib.sha256(data).hexdigest()
                report["objects_checked"] += 1
                report["media_cache"] = sorted(set(report["media_cache"]) | {media_cache or ""})
        if done:
            break
    for key, digest in digests.items():
        data, _ = get(key)
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            report["problems"].append(f"{key} changed after a playlist named it")
    return report


def serve():
    """Answers commands from stdin: a Python start and boto3's import (about 0.7 CPU-seconds) once
    per server instead of once per check. Each command gets a client of its own (9 ms), so its own
    connections, as a process of its own would: SeaweedFS left a PUT on a connection that had
    carried an empty PUT unanswered until the client's 60 s read timeout."""
    for line in sys.stdin:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                main(client(), *json.loads(line))
            answer = {"output": printed.getvalue()}
        except SystemExit as error:
            answer = {"error": str(error.code)}
        except Exception as error:  # every failure is the test's to report, the helper lives on
            answer = {"error": f"{error}\n{traceback.format_exc()}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        serve()
        sys.exit(0)
    try:
        main(client(), *sys.argv[1:])
    except (botocore.exceptions.ClientError, botocore.exceptions.EndpointConnectionError) as error:
        sys.exit(str(error))
