import PriceHTTPMessage

/// The admin listener (`PRICESVC_ADMIN_LISTEN`, off unless set, like PostgREST's admin server):
/// `/healthz`, `/readyz` checked against the database on every call, and `/metrics`, whose per-route
/// counters would let anyone on the public listener watch reports arrive. Nothing else is served here.
public struct OperationsApplication: HTTPApplication {
    let application: PriceApplication

    public init(_ application: PriceApplication) {
        self.application = application
    }

    var service: PriceService { application.service }

    public func respond(to request: HTTPRequest) -> Reply {
        let route: Route
        switch request.path {
        case "/healthz": route = .health
        case "/readyz": route = .ready
        case "/metrics": route = .metrics
        default: return Reply(label: Route.notFound.label, work: .now(APIError(.notFound).response))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return Reply(label: Route.notFound.label, work: .now(APIError(.methodNotAllowed(request.method)).response
                .adding([("Allow", "GET, HEAD")])))
        }
        switch route {
        case .ready:
            let (plan, service) = (service.readinessPlan(), service)
            return Reply(label: route.label, work: .onWorker(run: { application.execute(plan, route: route.label, requestID: request.requestID) },
                                                             expired: { service.overloaded(route) }))
        case .metrics:
            return Reply(label: route.label, work: .now(HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                body: Array((service.metrics.render() + service.keys.metricsText()).utf8))))
        default:
            return Reply(label: route.label, work: .now(.json(200, "{\"status\":\"ok\"}")))
        }
    }

    public func payloadTooLarge(_ request: HTTPRequest) -> (label: String, response: HTTPResponse) {
        (Route.notFound.label, APIError(.payloadTooLarge).response)
    }

    public func malformedRequest(_ request: HTTPRequest, reason: String) -> (label: String, response: HTTPResponse) {
        (Route.notFound.label, APIError(.malformedRequest(reason: reason, framingHint: false)).response)
    }
}
