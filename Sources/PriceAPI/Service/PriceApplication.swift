import PriceDB
import PriceHTTP

/// What a plan runs on: one pipelined round trip. `ConnectionPool` in production, a recorder in tests.
public protocol QueryRunner: Sendable {
    func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult]
}

extension ConnectionPool: QueryRunner {}

/// The service as the HTTP server sees it: the core's decision on the event loop, and a database
/// plan turned into the work a worker thread runs.
public struct PriceApplication: HTTPApplication {
    let service: PriceService
    /// The primary: writes, /auth, and reads when no replica answers.
    let database: any QueryRunner
    /// Read-only plans: the replica pool when configured, else (or failing it) `database`.
    let reads: ReadRouting

    public init(service: PriceService, database: any QueryRunner, readReplica: (any QueryRunner)? = nil) {
        self.service = service
        self.database = database
        self.reads = ReadRouting(primary: database, replica: readReplica, metrics: service.metrics,
                                 clock: service.clock)
    }

    public func respond(to request: HTTPRequest) -> Reply {
        let decision = service.decide(request)
        let cors = corsHeaders(request, decision.route)
        switch decision.outcome {
        case .answer(let response):
            return Reply(label: decision.route.label, work: .now(response.adding(cors)))
        case .database(let plan):
            let (service, route) = (self.service, decision.route)
            let ticket: DatabaseShares.Ticket
            switch service.admit(request, route, plan) {
            case .success(let admitted): ticket = admitted
            case .failure(let refusal): return Reply(label: route.label, work: .now(refusal.response.adding(cors)))
            }
            return Reply(label: route.label, work: .onWorker(
                run: {
                    defer { ticket.release() }
                    return execute(plan).adding(cors)
                },
                expired: {
                    ticket.release()
                    return service.overloaded(route).adding(cors)
                }))
        }
    }

    public func payloadTooLarge(_ request: HTTPRequest) -> (label: String, response: HTTPResponse) {
        let decision = service.payloadTooLarge(request)
        guard case .answer(let response) = decision.outcome else { preconditionFailure("413 needs no database") }
        return (decision.route.label, response.adding(corsHeaders(request, decision.route)))
    }

    public func malformedRequest(_ request: HTTPRequest, reason: String) -> (label: String, response: HTTPResponse) {
        let decision = service.malformedRequest(request, reason: reason)
        guard case .answer(let response) = decision.outcome else { preconditionFailure("400 needs no database") }
        return (decision.route.label, response.adding(corsHeaders(request, decision.route)))
    }

    /// Every answer, errors included, carries the CORS headers, or a browser would hide the error
    /// from the page; a preflight's answer already has its own.
    private func corsHeaders(_ request: HTTPRequest, _ route: Route) -> [(String, String)] {
        if case .options = route, request.header("access-control-request-method") != nil { return [] }
        return service.settings.cors.responseHeaders(origin: request.header("origin"))
    }

    /// The round trip, on a worker thread. Every database error is counted here, once.
    func execute(_ plan: DatabasePlan) -> HTTPResponse {
        do throws(DatabaseError) {
            let results = plan.readOnly ? try reads.run(plan.queries) : try database.run(plan.queries)
            return plan.answer(.success(results))
        } catch {
            service.metrics.recordDatabaseError(error)
            return plan.answer(.failure(error))
        }
    }
}
