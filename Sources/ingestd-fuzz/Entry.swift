import Foundation
import Ingest
import Logging
import Transcode

// The sanitizers' one harness, built two ways (see the Makefile's `fuzz-build`):
// - with `-sanitize=fuzzer,address -DFUZZING`: the build `make asan` and `make fuzz` share.
//   `ingestd-fuzz transcode INPUT OUT` runs the transcode job under AddressSanitizer (Tests/asan.sh);
//   anything else hands over to libFuzzer, its target from INGESTD_FUZZ_TARGET (probe, upload,
//   preset) and libFuzzer's own flags after it.
// - plain: `ingestd-fuzz TARGET FILE...` runs each file through the target once (corpus and
//   regression replay in the tests), exiting 0 when none of them crashed; `transcode` as above.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzEnvironment.target.run(Data(bytes: data, count: size))
    return 0
}

enum FuzzEnvironment {
    nonisolated(unsafe) static var target: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["INGESTD_FUZZ_TARGET"] ?? "probe"
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("INGESTD_FUZZ_TARGET must be one of \(FuzzTarget.allCases.map(\.rawValue))\n".utf8))
            exit(2)
        }
        return target
    }()
}

/// `transcode INPUT OUT`: the transcode path alone (``TranscodeJob``: open and check the upload,
/// decode, normalise, encode the ladder, publish atomically), without the fleet's and the
/// webhooks' dependencies. Exits 0 published, 65 refused as bad input, else the failure's status.
enum TranscodeRun {
    static func exit(_ arguments: [String]) -> Never {
        guard arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: ingestd-fuzz transcode INPUT OUT\n".utf8))
            Foundation.exit(ExitStatus.usage.rawValue)
        }
        let (input, output) = (arguments[0], arguments[1])
        Task {
            do {
                _ = try await TranscodeJob(input: input, destination: output, preset: .builtIn)
                    .run(logger: Logger(label: "ingestd-fuzz"))
                Foundation.exit(ExitStatus.success.rawValue)
            } catch {
                FileHandle.standardError.write(Data("ingestd-fuzz: \(error)\n".utf8))
                Foundation.exit(ExitStatus(for: error).rawValue)
            }
        }
        dispatchMain()
    }
}

#if FUZZING
typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>, Int) -> Int32

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: FuzzCallback) -> Int32

/// SwiftPM links an executable's `main` to `<module>_main`; here that hands over to libFuzzer,
/// or runs `transcode INPUT OUT`.
@_cdecl("ingestd_fuzz_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    let arguments = CommandLine.arguments.dropFirst()
    if arguments.first == "transcode" { TranscodeRun.exit(Array(arguments.dropFirst())) }
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
}
#else
@main struct Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.first == "transcode" { TranscodeRun.exit(Array(arguments.dropFirst())) }
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print("usage: ingestd-fuzz {\(FuzzTarget.allCases.map(\.rawValue).joined(separator: ","))} FILE... | transcode INPUT OUT")
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            target.run(data)
            count += 1
        }
        print("\(target.rawValue): \(count) inputs replayed")
    }
}
#endif
