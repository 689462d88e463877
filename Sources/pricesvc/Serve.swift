import AnonAuth
import Foundation
import PriceAPI
import PriceDB
import PriceHTTP
import PriceMigrations
import PriceSQL

extension Commands {
    /// `pricesvc serve`: builds the parts `ServePlan` decided, checks the database, serves until
    /// SIGTERM/SIGINT, then stops everything it started.
    static func serve(_ configuration: Configuration) throws -> Int32 {
        ShutdownSignal.ignoreBrokenPipes()
        let secrets = try loadSecrets(configuration)
        let plan = try ServePlan(configuration)
        let signUpAttestation = try Commands.signUpAttestation(configuration, secret: secrets.current)
        if signUpAttestation != nil { noteAndroidStatusList(configuration) }
        let migrations = try MigrationsLocation.resolve(configuration)
        let (shipped, schemaVersion, superseded) = try MigrationRunner.shipped(in: migrations.path)

        let keys = ServiceKeys(secret: secrets.current, extraVerifying: secrets.previous.map { [$0] } ?? [],
                               accessTokenLifetime: plan.service.accessTokenLifetime,
                               acceptsLegacyAnonKey: plan.keys.acceptsLegacyAnonKey,
                               tokenCacheEntries: plan.keys.tokenCacheEntries)
        let pool = ConnectionPool(plan.primaryPool)
        let readPool = plan.replicaPool.map { ConnectionPool($0) }
        do {
            try pool.waitUntilReachable(timeout: .seconds(plan.startupTimeoutSeconds))
        } catch {
            if error.connectionRefusal != nil {
                fail(error.explanation)
            } else {
                fail("database unreachable after \(plan.startupTimeoutSeconds) s: \(error.message)")
            }
            return 1
        }
        let login = try OwnerTasks(conninfo: plan.primaryPool.conninfo).roleBypassesRowSecurity()
        if login.bypasses {
            switch plan.privilegedRole(login.role) {
            case .refuse(let problem): throw ConfigurationError(description: problem)
            case .warn(let warning): note(warning)
            }
        }

        // The secret must be one of the database's signing keys, or PostgreSQL refuses every token this
        // instance signs: refuse to start rather than serve 401s.
        let refresher = KeyRefresher(keys: keys, database: pool, interval: Double(plan.keys.refreshSeconds))
        let signingKey: [UInt8]
        do {
            switch try refresher.refresh() {
            case .success(let resolved): signingKey = resolved.signing
            case .failure(let problem):
                fail("signing keys: \(problem.description); start with a secret of the set (pricesvc keys list shows it)")
                return 1
            }
        } catch {
            fail("cannot read the database's signing keys (is it migrated? run pricesvc migrate): \(error.message)")
            return 1
        }
        // Derived once, from the key every instance signs with at start (the database's current key), so
        // instances started with different secrets during a rotation agree on them.
        let signUpChallenges = plan.signUpChallenge.map {
            SignUpChallenges(secret: signingKey, maxNumber: $0.maxNumber, lifetimeSeconds: $0.lifetimeSeconds)
        }

        var replicaStats: (@Sendable () -> PoolStats)?
        if let readPool { replicaStats = { readPool.stats } }
        let serverMetrics = ServiceMetrics.serverMetrics()
        let serviceMetrics = ServiceMetrics(server: serverMetrics, pool: { pool.stats }, build: BuildInfo.labels,
                                            databaseWorkers: plan.server.databaseWorkers, replicaPool: replicaStats)
        let service = PriceService(
            settings: plan.service,
            keys: keys,
            clientKey: ClientKey(secret: signingKey),
            refreshChain: RefreshTokenChain(secret: signingKey),
            readiness: Readiness(shipped: shipped, layout: .pricesvc, version: schemaVersion, superseded: superseded),
            metrics: serviceMetrics,
            signUpChallenges: signUpChallenges,
            signUpAttestation: signUpAttestation)
        let application = PriceApplication(service: service, database: pool, readReplica: readPool)
        let http = HTTPServer(configuration: plan.server, application: application, metrics: serverMetrics)
        let admin = plan.admin.map {
            (server: HTTPServer(configuration: $0.server, application: OperationsApplication(application), metrics: serverMetrics),
             address: $0.address)
        }
        let background = BackgroundTasks(backgroundTasks(plan, refresher: refresher, metrics: serviceMetrics))

        let shutdownRequested = ShutdownSignal()
        try http.start()
        background.start()
        // On stderr: stdout carries only the access log's JSON lines.
        note("listening on http://\(ListenAddress(host: plan.listen.host, port: http.boundPort))")
        if let (adminServer, address) = admin {
            do {
                try adminServer.start()
            } catch {
                http.shutdown(grace: 0)
                stop(background, within: plan.backgroundStopTimeout)
                throw error
            }
            note("admin listening on http://\(ListenAddress(host: address.host, port: adminServer.boundPort))")
        }
        note("\(BuildInfo.versionLine); migrations from \(migrations.path) (\(migrations.origin.rawValue))")

        shutdownRequested.wait()
        note("shutting down: finishing \(http.requestsInFlight) in-flight request(s), at most \(plan.shutdownGraceSeconds) s")
        http.shutdown(grace: Double(plan.shutdownGraceSeconds)) { pending in
            note("shutdown grace period over: waiting for \(pending) database job(s) to finish")
        }
        admin?.server.shutdown(grace: 1)
        stop(background, within: plan.backgroundStopTimeout)
        pool.close()
        readPool?.close()
        return 0
    }

    /// What runs beside the server: the key refresh, and, with an admin listener, the reader of when
    /// `prune` and `import-rates` last succeeded.
    static func backgroundTasks(_ plan: ServePlan, refresher: KeyRefresher, metrics: ServiceMetrics) -> [BackgroundTask] {
        var tasks = [BackgroundTask(name: "pricesvc-keys", body: { stop in
            refresher.run(isStopped: { stop.isRequested }, pause: { _ = stop.wait(seconds: $0) }, report: { note($0) })
        }, wake: { refresher.wake() })]
        if let interval = plan.maintenanceRunsInterval {
            // They run as separate processes and record it in the database. Read on a connection of its
            // own, for the admin /metrics: a scrape never waits for the database or takes a pool
            // connection from a request.
            let reader = OwnerTasks(conninfo: plan.primaryPool.conninfo, connectTimeout: .seconds(5))
            tasks.append(BackgroundTask(name: "pricesvc.maintenance-runs", body: { stop in
                repeat {
                    metrics.recordMaintenanceRuns(try? reader.maintenanceRuns())
                } while !stop.wait(seconds: interval / .seconds(1))
            }))
        }
        return tasks
    }

    /// Stops the background tasks; one still in a database call at the deadline is named, not waited for.
    static func stop(_ background: BackgroundTasks, within timeout: Duration) {
        let running = background.stopAndJoin(within: timeout)
        if !running.isEmpty {
            note("background task(s) still running at exit: \(running.joined(separator: ", "))")
        }
    }
}
