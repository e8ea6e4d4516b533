import Foundation
import Hummingbird
import Ingest

/// `DELETE /v1/jobs/{id}?token=`: the app's backend takes a video down with a token it signed for
/// that video and for deletion (``DeletionLink``). The deletion is recorded and fenced at once
/// (``VideoDeletion/record(_:reason:in:)``) and completed by the daemon or worker that owns the
/// store: `202` with the tombstone (`200` with the first one when it was deleted before), `404`
/// for an id the store never had, `409` for one it does not own, `401` for a missing, forged or
/// expired token and `403` for one signed for another video or another kind of request.
struct JobDeletionRoute {
    let handler: TusHandler

    /// The optional body: `{"code": "owner", "reason": "…"}`.
    struct Body: Decodable {
        var code: DeletionCode?
        var reason: String?
    }

    func delete(_ request: Request, context: UploadRequestContext, id: String) async throws -> Response {
        do {
            _ = try context.token(.delete, id: id)
        } catch {
            // The middleware checked the token is genuine: it is for another video or another request.
            throw TusRefusal(.forbidden, error.reason, error.message)
        }
        let body = try await request.body.collect(upTo: 8192)
        let asked = body.readableBytes == 0 ? Body() : try JSONDecoder().decode(Body.self, from: Data(buffer: body))
        let reason: DeletionReason
        do {
            reason = try DeletionReason(code: asked.code ?? .owner, text: asked.reason ?? "deleted by its owner in the app", by: "api")
        } catch {
            throw TusRefusal(.badRequest, "bad_reason", "\(error)")
        }
        let outcome = await VideoDeletion.record(id, reason: reason, in: handler.store.deletions)
        let status: HTTPResponse.Status
        switch outcome.result {
        case .pending, .deleted: status = .accepted
        case .alreadyDeleted: status = .ok
        case .unknown: throw TusRefusal(.notFound, "unknown", "no upload or job \(id)")
        case .refused: throw TusRefusal(.conflict, "not_owned", outcome.message)
        case .failed: throw TusRefusal(.serviceUnavailable, "storage", outcome.message)
        }
        handler.logger.info("deletion recorded", metadata: ["id": "\(id)", "code": "\(reason.code.rawValue)", "result": "\(outcome.result.rawValue)"])
        return Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder.ingestd.encode(outcome))))
    }
}
