// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ingestd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "ingestd", targets: ["ingestd"]),
        .library(name: "Transcode", targets: ["Transcode"]),
        .library(name: "Ingest", targets: ["Ingest"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev",
                              "libswresample-dev", "libswscale-dev", "libavfilter-dev"])]
        ),
        .target(name: "Transcode", dependencies: ["CFFmpeg"]),
        // Landlock's three system calls, for confining job processes (Ingest's JobSandbox).
        .target(name: "CLandlock"),
        .target(name: "Ingest", dependencies: [
            "CLandlock",
            "Transcode",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
        // The fleet: many workers on one PostgreSQL job queue, with /metrics and health over HTTP.
        .target(name: "Fleet", dependencies: [
            "ObjectStorage", "Storage",
            "Ingest", "Transcode",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Hummingbird", package: "hummingbird"),
        ]),
        // Object storage (S3 API): SigV4 signing on swift-crypto.
        // Uploads and ladders in a bucket: the Ingest side of object storage (kept out of Ingest so
        // the sanitized and fuzzing builds of the media path never link an HTTP client).
        .target(name: "Storage", dependencies: [
            "Ingest", "Transcode", "ObjectStorage",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "ObjectStorage", dependencies: [
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        // Direct uploads from phones: a tus 1.0 server with signed upload URLs and a job status API.
        .target(name: "Uploads", dependencies: [
            "Ingest", "Transcode", "Fleet", "ObjectStorage",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The operator console (`ingestd console`): server-rendered pages over either store.
        .target(name: "Console", dependencies: [
            "Ingest", "Transcode", "Playback",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Mustache", package: "swift-mustache"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Signed playback URLs: the key and the token nginx's secure_link checks (MD5 on swift-crypto).
        .target(name: "Playback", dependencies: [
            "Ingest",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Signed webhooks (Standard Webhooks) delivered from the spool's durable outbox.
        .target(name: "Webhooks", dependencies: [
            "Ingest",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(name: "ingestd", dependencies: [
            "Fleet", "Webhooks", "ObjectStorage", "Storage", "Uploads", "Console", "Playback",
            "Ingest", "Transcode",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The sanitizers' harness (`make asan`, `make fuzz`): coverage-guided fuzzing of the
        // probe/plan path and the upload.json and preset parsers, and the transcode job alone,
        // without the fleet's and the webhooks' dependencies; built plainly, it replays a corpus
        // (the regression tests use it).
        .executableTarget(name: "ingestd-fuzz", dependencies: [
            "Ingest", "Transcode", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "TranscodeTests", dependencies: ["Transcode"]),
        // What the tests share, as Hummingbird keeps HummingbirdTesting: fixtures and paths, the
        // independent checkers (ffprobe, GStreamer, A/V sync marks), a real PostgreSQL server, a
        // real webhook receiver, a daemon under test.
        .target(name: "IngestdTesting", dependencies: [
            "Transcode", "Ingest", .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/IngestdTesting", exclude: ["webhook_receiver.py", "tcp_proxy.py", "sigv4_reference.py", "s3_check.py", "http_fault_proxy.py", "validate_manifests.py", "tus_client.py", "chromium_play.py", "chromium_console.py", "nginx_cdn.py", "hls_viewer.py"]),
        .testTarget(name: "IngestdTests", dependencies: [
            "IngestdTesting", "Transcode", "Ingest", "Fleet", "Webhooks", "ObjectStorage", "Storage", "Uploads", "Console", "Playback",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
