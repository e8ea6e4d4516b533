/// The API of `ingestd serve`, served at `/openapi.yaml`: generated from docs/openapi.yaml by
/// `make openapi` (Scripts/openapi-swift.sh); do not edit by hand.
enum OpenAPIDocument {
    static let yaml = #"""
openapi: 3.1.0
info:
  title: ingestd uploads
  version: 1.0.0
  summary: Resumable uploads (tus 1.0) from the app's phones, the status of each upload's job, and its deletion.
  description: |
    The app's backend signs the URLs (`ingestd upload-url`, or `UploadLink` in Swift) with the
    upload secret: `upload_url` is a tus creation URL a stock tus client POSTs to, `status_url`
    the job's status; `delete_url` (`upload-url --delete`, `DeletionLink`) takes the video down.
    Every request carries its token in `?token=`. See docs/UPLOADS.md.
  license:
    name: GPL-3.0-or-later
paths:
  /v1/uploads:
    options:
      summary: tus discovery
      responses:
        "204":
          description: What this server supports.
          headers:
            Tus-Version: {schema: {type: string, const: 1.0.0}}
            Tus-Extension: {schema: {type: string, example: "creation,creation-with-upload,expiration,termination,checksum"}}
            Tus-Max-Size: {schema: {type: integer}}
            Tus-Checksum-Algorithm: {schema: {type: string, example: "sha1,sha256,md5"}}
    post:
      summary: Create an upload (tus creation, creation-with-upload)
      parameters:
        - $ref: "#/components/parameters/UploadToken"
        - $ref: "#/components/parameters/TusResumable"
        - {name: Upload-Length, in: header, required: true, schema: {type: integer, minimum: 1}}
        - {name: Upload-Metadata, in: header, schema: {type: string}, description: "tus metadata; `filename` names the original (required in an upload set: the name upload.json uses)"}
      requestBody:
        required: false
        content:
          application/offset+octet-stream: {schema: {type: string, format: binary}}
      responses:
        "201":
          description: Created; `Location` is the upload's URL, `/v1/uploads/{id}/{part}` (it carries the token).
          headers:
            Location: {schema: {type: string}}
            Upload-Expires: {schema: {type: string}}
            Upload-Offset: {schema: {type: integer}, description: "with a body (creation-with-upload)"}
        "400": {$ref: "#/components/responses/Refused"}
        "401": {$ref: "#/components/responses/Refused"}
        "409": {description: "The token's uploads are all created (one for a video file, `files` for a set), or the job exists.", $ref: "#/components/responses/Refused"}
        "412": {$ref: "#/components/responses/Refused"}
        "413": {description: "Upload-Length (with the set's other files) passes the token's or the server's limit (answered before any body is read).", $ref: "#/components/responses/Refused"}
  /v1/uploads/{id}/{part}:
    parameters:
      - {name: id, in: path, required: true, schema: {$ref: "#/components/schemas/JobID"}}
      - {name: part, in: path, required: true, schema: {type: integer, minimum: 1}, description: "1 for a video file; 1…files for an upload set"}
      - $ref: "#/components/parameters/UploadToken"
      - $ref: "#/components/parameters/TusResumable"
    head:
      summary: Where to resume
      responses:
        "200":
          description: The acknowledged offset (every acknowledged byte is on disk).
          headers:
            Upload-Offset: {schema: {type: integer}}
            Upload-Length: {schema: {type: integer}}
            Upload-Expires: {schema: {type: string}}
        "401": {$ref: "#/components/responses/Refused"}
        "404": {$ref: "#/components/responses/Refused"}
    patch:
      summary: Send bytes at Upload-Offset; the last byte of the last file makes the upload a job
      parameters:
        - {name: Upload-Offset, in: header, required: true, schema: {type: integer}}
        - {name: Upload-Checksum, in: header, schema: {type: string, example: "sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0="}}
      requestBody:
        required: true
        content:
          application/offset+octet-stream: {schema: {type: string, format: binary}}
      responses:
        "204":
          description: Stored and fsynced.
          headers:
            Upload-Offset: {schema: {type: integer}}
        "401": {$ref: "#/components/responses/Refused"}
        "404": {$ref: "#/components/responses/Refused"}
        "408": {description: "The body came slower than the server's minimum rate; what arrived is kept.", $ref: "#/components/responses/Refused"}
        "409": {description: "Upload-Offset does not match, or another request is writing this upload.", $ref: "#/components/responses/Refused"}
        "413": {description: "The body would pass Upload-Length.", $ref: "#/components/responses/Refused"}
        "415": {$ref: "#/components/responses/Refused"}
        "460": {description: "Checksum mismatch; the chunk was discarded.", $ref: "#/components/responses/Refused"}
        "503": {description: "Too many uploads in progress; see Retry-After.", $ref: "#/components/responses/Refused"}
    delete:
      summary: Terminate an unfinished upload (the whole set)
      responses:
        "204": {description: "Its bytes (all the set's) are removed; the token cannot start another upload."}
        "403": {description: "The upload is complete: it is a job.", $ref: "#/components/responses/Refused"}
        "404": {$ref: "#/components/responses/Refused"}
  /v1/jobs/{id}:
    get:
      summary: The job's status, for the app's progress bar
      parameters:
        - {name: id, in: path, required: true, schema: {$ref: "#/components/schemas/JobID"}}
        - {name: token, in: query, required: true, schema: {type: string}, description: "the status token from status_url"}
      responses:
        "200":
          description: The status.
          content:
            application/json: {schema: {$ref: "#/components/schemas/JobStatus"}}
        "401": {$ref: "#/components/responses/Refused"}
        "404": {$ref: "#/components/responses/Refused"}
    delete:
      summary: Delete the job's video (its owner deleted it in the app)
      description: |
        Records the tombstone and fences the job at once; the daemon (`watch`) or the fleet's
        workers that own the store remove the video at their next upkeep (every quarter lease,
        15 s by default) and send `upload.deleted`. See docs/DELETION.md.
      parameters:
        - {name: id, in: path, required: true, schema: {$ref: "#/components/schemas/JobID"}}
        - {name: token, in: query, required: true, schema: {type: string}, description: "the delete token from delete_url (scope `delete`, this id)"}
      requestBody:
        required: false
        content:
          application/json:
            schema:
              type: object
              properties:
                code: {$ref: "#/components/schemas/DeletionCode"}
                reason: {type: string, minLength: 1, maxLength: 1000, default: "deleted by its owner in the app", description: "the words the tombstone keeps"}
      responses:
        "200":
          description: Deleted before (`already_deleted`); the first tombstone, unchanged.
          content:
            application/json: {schema: {$ref: "#/components/schemas/DeletionOutcome"}}
        "202":
          description: Recorded and fenced (`pending`); the owner's upkeep completes it.
          content:
            application/json: {schema: {$ref: "#/components/schemas/DeletionOutcome"}}
        "400": {description: "The body is not the JSON above (at most 8 KiB), or the reason is empty, over 1000 characters or holds NUL (`bad_reason`).", $ref: "#/components/responses/Refused"}
        "401": {description: "The token is missing, malformed, forged or expired.", $ref: "#/components/responses/Refused"}
        "403": {description: "A genuine token for another video, or of another scope (an upload or status token).", $ref: "#/components/responses/Refused"}
        "404": {description: "No upload or job has this id; nothing recorded.", $ref: "#/components/responses/Refused"}
        "409": {description: "`not_owned`: this server's store does not own the job (a spool's job handed to the fleet's queue).", $ref: "#/components/responses/Refused"}
        "503": {description: "The store failed; nothing was recorded, try again.", $ref: "#/components/responses/Refused"}
  /openapi.yaml:
    get:
      summary: This document
      responses:
        "200": {description: "OpenAPI 3.1", content: {application/yaml: {}}}
  /metrics:
    get:
      summary: Prometheus metrics (bytes received, uploads in progress, resumes, refusals by reason)
      responses:
        "200": {description: "Prometheus text format", content: {text/plain: {}}}
  /healthz:
    get:
      summary: The process is up
      responses:
        "200": {description: "ok", content: {text/plain: {}}}
components:
  parameters:
    UploadToken:
      {name: token, in: query, required: true, schema: {type: string}, description: "the upload token from upload_url"}
    TusResumable:
      {name: Tus-Resumable, in: header, required: true, schema: {type: string, const: 1.0.0}}
  responses:
    Refused:
      description: Refused; the body says why (what, and the limit where there is one).
      content:
        text/plain: {schema: {type: string}}
  schemas:
    JobID:
      type: string
      pattern: "^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$"
    JobStatus:
      type: object
      required: [id, state]
      properties:
        id: {$ref: "#/components/schemas/JobID"}
        state: {type: string, enum: [uploading, queued, processing, completed, rejected, failed, deleted]}
        progress: {type: integer, minimum: 0, maximum: 100, description: "bytes received while uploading; the job's progress while processing"}
        reason:
          type: object
          properties:
            code: {type: string, example: too_long}
            message: {type: string}
            attempts: {type: integer, description: "attempts made"}
            at: {type: string, format: date-time, description: "when it was decided, where the store keeps it"}
        playable: {type: boolean, description: "processing: true once the video can be played while it is still being made (at master_url)"}
        master_url: {type: string, description: "completed, or processing and playable: the HLS master playlist"}
        poster_url: {type: string, description: "completed: the largest poster"}
        mp4_url: {type: string, description: "completed: the compressed 1080p30 MP4"}
        playback: {type: string, enum: [public, signed], description: "signed: the URLs above play once the app's backend signs them (docs/OUTPUT.md, Signed playback)"}
        captions:
          type: array
          description: "completed: the caption tracks (the master lists them as its subtitles group; docs/OUTPUT.md, Captions)"
          items:
            type: object
            required: [language, name, source]
            properties:
              language: {type: string, description: "BCP 47 tag, e.g. en, pt-BR"}
              name: {type: string}
              source: {type: string, enum: [app], description: "app: the upload's own track or one added with ingestd captions"}
              track_url: {type: string, description: "the whole track as one WebVTT file"}
    DeletionCode:
      type: string
      enum: [owner, notice, moderation, erasure, other]
      default: owner
    DeletionOutcome:
      type: object
      required: [id, result, message]
      properties:
        id: {$ref: "#/components/schemas/JobID"}
        result: {type: string, enum: [pending, already_deleted]}
        message: {type: string}
        tombstone:
          type: object
          required: [id, at, reason, purge]
          properties:
            id: {$ref: "#/components/schemas/JobID"}
            at: {type: string, format: date-time, description: "when the deletion was recorded"}
            reason:
              type: object
              required: [code, text, by]
              properties:
                code: {$ref: "#/components/schemas/DeletionCode"}
                text: {type: string}
                by: {type: string, description: "who asked: `api` here; `cli:<user>@<host>` or `console:<name>` from the other doors"}
            purge: {type: array, items: {type: string}, description: "the CDN paths removed, relative to its root (filled as the deletion proceeds)"}
            completedAt: {type: string, format: date-time, description: "when nothing of the video was left; absent while under way"}
            erasureIncomplete: {type: string, description: "code `erasure` only: what could not be erased (a versioned bucket's old versions)"}

"""#
}
