import Foundation
import IngestdTesting
import Testing

/// `deploy/kubernetes/` checked offline (#30): Kubernetes' kinds by kubernetes-validate in strict
/// mode, KEDA's against the schema written down from its CRDs, and the manual's rules (grace
/// above --grace, probes, secrets as files).
@Suite(.enabled(if: (try? Tool.run("python3", ["-c", "import kubernetes_validate, jsonschema, yaml"]))?.status == 0,
                "kubernetes-validate is not installed (pip install kubernetes-validate)"))
struct KubernetesManifestTests {
    static let script = "\(Paths.root)/Tests/IngestdTesting/validate_manifests.py"

    @Test func everyManifestValidates() throws {
        let result = try Tool.run("python3", [Self.script, "\(Paths.root)/deploy/kubernetes"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for kind in ["Deployment", "PodDisruptionBudget", "ScaledObject", "TriggerAuthentication", "CronJob"] {
            #expect(result.stdout.contains(" \(kind)/"), "\(kind) checked")
        }
    }

    /// The checker refuses what the API server would: an unknown field, a misspelt KEDA field, a
    /// grace period the drain does not fit in.
    @Test func theCheckerRefusesBrokenManifests() throws {
        let copy = Paths.scratch("kubernetes-broken")
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: "\(Paths.root)/deploy/kubernetes", toPath: copy)
        for (file, from, to) in [("worker.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true"),
                                 ("worker.yaml", "terminationGracePeriodSeconds: 45", "terminationGracePeriodSeconds: 30"),
                                 ("autoscaling.yaml", "targetQueryValue: \"4\"", "targetQueryValu: \"4\"")] {
            let path = "\(copy)/\(file)"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.contains(from))
            try text.replacingOccurrences(of: from, with: to).write(toFile: path, atomically: true, encoding: .utf8)
        }
        let result = try Tool.run("python3", [Self.script, copy])
        #expect(result.status == 1)
        #expect(result.stdout.contains("FAULT worker.yaml Deployment") && result.stdout.contains("readOnlyRootFileSystem"), "\(result.stdout)")
        #expect(result.stdout.contains("FAULT autoscaling.yaml ScaledObject"), "\(result.stdout)")
        #expect(result.stdout.contains("terminationGracePeriodSeconds must be above"), "\(result.stdout)")
    }
}
