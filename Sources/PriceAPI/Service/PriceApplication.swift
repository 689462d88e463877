import Foundation
import PriceDB
import PriceHTTPMessage

/// The service as the HTTP server sees it: the core's decision on the event loop, and a database
/// plan turned into the work a worker thread runs.
public struct PriceApplication: HTTPApplication {
    let service: PriceService
    /// The primary for writes and /auth; read-only plans go to the replica when one answers.
    let database: RoutedPool

    public init(service: PriceService, database: RoutedPool) {
        self.service = service
        self.database = database
    }

    /// The primary and optional replica as one `RoutedPool`, whose reads the service's metrics count.
    public init(service: PriceService, database: any QueryRunner, readReplica: (any QueryRunner)? = nil) {
        let metrics = service.metrics
        self.init(service: service, database: RoutedPool(primary: database, replica: readReplica, clock: service.clock) { route in
            switch route {
            case .primary: metrics.recordRead(onReplica: false)
            case .replica: metrics.recordRead(onReplica: true)
            case .primaryInsteadOfReplica:
                metrics.recordReplicaFallback()
                metrics.recordRead(onReplica: false)
            }
        })
    }

    public func respond(to request: HTTPRequest) -> Reply {
        let decision = service.decide(request)
        let cors = corsHeaders(request, decision.route)
        switch decision.outcome {
        case .answer(let response):
            return Reply(label: decision.route.label, headers: cors, work: .now(
                ErrorLog.serverError(response, route: decision.route.label, requestID: request.requestID)))
        case .database(let plan):
            let (service, route) = (self.service, decision.route)
            let ticket: DatabaseShares.Ticket
            switch service.admit(request, route, plan) {
            case .success(let admitted): ticket = admitted
            case .failure(let refusal):
                return Reply(label: route.label, headers: cors, work: .now(
                    ErrorLog.serverError(refusal.response, route: route.label, requestID: request.requestID)))
            }
            return Reply(label: route.label, headers: cors, work: .onWorker(
                run: {
                    defer { ticket.release() }
                    return execute(plan, route: route.label, requestID: request.requestID)
                },
                expired: {
                    ticket.release()
                    return ErrorLog.serverError(service.overloaded(route), route: route.label, requestID: request.requestID)
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
        return service.cors.responseHeaders(origin: request.header("origin"))
    }

    /// The round trip, on a worker thread. Every database error is counted here, once, and logged with
    /// its SQLSTATE when it is answered 5xx; any other 5xx the plan answers is logged too.
    ///
    /// While the database is unavailable the round trip is held (`DatabaseHold`): tried again with
    /// backoff, within the bound, when repeating it cannot apply it twice.
    func execute(_ plan: DatabasePlan, route: String = "-", requestID: String = "-") -> HTTPResponse {
        let (database, shares) = (self.database, service.databaseShares)
        let hold = plan.repetition == .never ? DatabaseHold.off : service.hold
        let (clock, metrics) = (ContinuousClock(), service.metrics)
        var attempts = 0
        let (outcome, held) = hold.run(repeatable: plan.repetition == .always, now: { clock.now },
                                       sleep: { Thread.sleep(forTimeInterval: $0 / .seconds(1)) }) { () throws(DatabaseError) in
            attempts += 1
            if attempts == 2 { metrics.recordHoldStarted() }
            do throws(DatabaseError) {
                let results = try database.run(plan.queries, readOnly: plan.readOnly)
                shares.noteDatabase(available: true)
                return results
            } catch {
                if DatabaseHold.isHeldFailure(error) { shares.noteDatabase(available: false) }
                throw error
            }
        }
        if attempts > 1 { metrics.recordHoldEnded() }
        if let (ending, duration) = held { metrics.recordHold(ending, duration: duration) }
        do throws(DatabaseError) {
            let results = try outcome.get()
            return ErrorLog.serverError(plan.answer(.success(results)), route: route, requestID: requestID)
        } catch {
            service.metrics.recordDatabaseError(error)
            let response = plan.answer(.failure(error))
            // The client's mistakes (4xx) are counted, not logged: a client could flood the log with them.
            if response.status >= 500 {
                let kind: String
                switch APIError.metricsKind(error) {
                case .database(let label), .client(let label): kind = label
                }
                ErrorLog.databaseError(error, kind: kind, status: response.status, route: route, requestID: requestID)
            }
            return response
        }
    }

}
