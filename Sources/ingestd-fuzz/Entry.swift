import Foundation

// Built two ways (see Makefile `fuzz`):
// - with `-sanitize=fuzzer -DFUZZING`: a libFuzzer binary; the target comes from
//   INGESTD_FUZZ_TARGET (probe, upload, preset) and libFuzzer's own flags follow.
// - plain: `ingestd-fuzz TARGET FILE...` runs each file through the target once (corpus and
//   regression replay in the tests), exiting 0 when none of them crashed.

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

#if FUZZING
typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>, Int) -> Int32

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: FuzzCallback) -> Int32

/// SwiftPM links an executable's `main` to `<module>_main`; here that hands over to libFuzzer.
@_cdecl("ingestd_fuzz_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
}
#else
@main struct Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print("usage: ingestd-fuzz {\(FuzzTarget.allCases.map(\.rawValue).joined(separator: ","))} FILE...")
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
