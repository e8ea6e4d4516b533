import ArgumentParser
import Ingest

/// `--upload-secret-file`: the key `serve` checks upload URLs with and `upload-url` signs them with.
struct UploadSecretOption: ParsableArguments {
    @Option(help: ArgumentHelp("The upload secret: one line upsec_<base64> of 24 to 64 bytes, mode 600 (echo upsec_$(openssl rand -base64 32)).",
                               valueName: "file"))
    var uploadSecretFile: String

    /// The key, or exit 78 naming the file and what is wrong with it.
    func key() throws -> [UInt8] {
        try Report.catching { try SecretFile(uploadSecretFile, prefix: "upsec_", purpose: "upload secret").key }
    }
}
