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
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev",
                              "libswresample-dev", "libswscale-dev", "libavfilter-dev"])]
        ),
        .target(name: "Transcode", dependencies: ["CFFmpeg"]),
        .target(name: "Ingest", dependencies: [
            "Transcode",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(name: "ingestd", dependencies: [
            "Ingest", "Transcode",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Coverage-guided fuzzing of the probe/plan path and the upload.json and preset parsers
        // (`make fuzz`); built plainly, it replays a corpus (the regression tests use it).
        .executableTarget(name: "ingestd-fuzz", dependencies: ["Ingest", "Transcode"]),
        .testTarget(name: "TranscodeTests", dependencies: ["Transcode"]),
        .testTarget(name: "IngestdTests", dependencies: ["Transcode", "Ingest"]),
    ],
    swiftLanguageModes: [.v6]
)
