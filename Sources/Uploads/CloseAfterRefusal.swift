import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes the connection once a refusal (any status from 400 up, the router's own 404s included)
/// or a response marked `Connection: close` is written. Hummingbird otherwise reads (drains) the
/// rest of a refused request's body before the next request, and a client trickling that body a
/// byte at a time (slowloris) would hold the connection for ever.
final class CloseAfterRefusal: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var closing = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            closing = head.status.code >= 400 || head.headerFields[.connection] == "close"
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guard closing else { return context.write(data, promise: promise) }
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        }
    }
}
