import ArgumentParser
import Foundation
import Ingest
import Webhooks

/// `--webhook URL --webhook-secret-file FILE`, shared by the commands that publish.
struct WebhookOption: ParsableArguments {
    @Option(name: .customLong("webhook"), help: ArgumentHelp(
        "POST a signed event (Standard Webhooks) to this URL for every upload that becomes playable while it grows, is published, rejected or failed.",
        valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("File holding the signing secret, whsec_<base64> (mode 600).", valueName: "file"))
    var webhookSecretFile: String?

    @Option(help: ArgumentHelp(
        "One entry per delivery attempt, comma-separated: the first attempt is immediate (0), each later one waits its entry in seconds after the previous failure; after the last the event is kept as dead (default: the specification's 0,5,300,1800,7200,18000,36000,36000).",
        valueName: "list"))
    var webhookSchedule: String?

    @Option(help: "Seconds one delivery attempt may take.")
    var webhookTimeout: Double = 15

    func validate() throws {
        guard url != nil || webhookSecretFile == nil else { throw ValidationError("--webhook-secret-file needs --webhook URL") }
        guard let url else { return }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
            throw ValidationError("--webhook must be an http:// or https:// URL, got \(url)")
        }
        guard webhookSecretFile != nil else { throw ValidationError("--webhook needs --webhook-secret-file FILE (whsec_<base64>, mode 600)") }
        guard webhookTimeout > 0, webhookTimeout <= 300 else { throw ValidationError("--webhook-timeout must be in (0, 300] seconds") }
        _ = try schedule()
    }

    /// The endpoint, with its secret read and checked; nil without `--webhook`.
    func endpoint() throws -> WebhookEndpoint? {
        guard let url, let webhookSecretFile else { return nil }
        return WebhookEndpoint(url: url, secret: try WebhookSecret(file: webhookSecretFile), schedule: try schedule(),
                               timeoutSeconds: webhookTimeout)
    }

    private func schedule() throws -> [Double] {
        guard let webhookSchedule else { return WebhookEndpoint.standardSchedule }
        let delays = webhookSchedule.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !delays.isEmpty, delays.count <= 100, delays.allSatisfy({ ($0 ?? -1) >= 0 && ($0 ?? 0) <= 7 * 86_400 }) else {
            throw ValidationError("--webhook-schedule must be 1 to 100 comma-separated delays of 0 to 604800 seconds, got \(webhookSchedule)")
        }
        return delays.compactMap { $0 }
    }
}
