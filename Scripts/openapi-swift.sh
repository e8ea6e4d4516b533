#!/bin/sh
# Regenerates Sources/Uploads/OpenAPIDocument.swift from docs/openapi.yaml (the one source of the
# API document; `make openapi`). A test checks that the served document is the checked-in one.
set -eu
cd "$(dirname "$0")/.."
{
    printf '%s\n' '/// The API of `ingestd serve`, served at `/openapi.yaml`: generated from docs/openapi.yaml by' \
        '/// `make openapi` (Scripts/openapi-swift.sh); do not edit by hand.' 'enum OpenAPIDocument {' '    static let yaml = #"""'
    cat docs/openapi.yaml
    printf '\n%s\n%s\n' '"""#' '}'
} > Sources/Uploads/OpenAPIDocument.swift
