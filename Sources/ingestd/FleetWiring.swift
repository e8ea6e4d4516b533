import Fleet
import Foundation
import Ingest
import Logging
import PostgresNIO
import ServiceLifecycle
import Webhooks

/// A process's side of the fleet's queue, built once for `watch --database` and `worker`: the
/// PostgreSQL client, the store the worker claims from, and the webhook sender reading the
/// queue's outbox. Webhook timestamps use the database's clock wherever a worker measures it.
struct FleetWiring {
    let store: PostgresStore
    /// The client, then the webhook sender (when there is an endpoint): run them before the worker.
    let services: [ServiceGroupConfiguration.ServiceConfiguration]

    /// `measuresClock`: a worker of this process runs on `store` and measures the database's
    /// clock at each upkeep (the sender waits for its first measurement); otherwise webhook
    /// timestamps use this host's clock.
    init(database: DatabaseURL, configuration: inout JobWorkerConfiguration, maxAttempts: Int, endpoint: WebhookEndpoint?,
         measuresClock: Bool, logger: Logger) {
        let client = database.makeClient(logger: logger)
        // A store call never outlasts a quarter lease: the lease keeper's deadline is half of one.
        let queue = JobQueue(client: client, logger: logger, timeout: min(database.callTimeout, configuration.lease / 4))
        configuration.clock = SharedClock(measured: !measuresClock)
        store = PostgresStore(queue: queue, database: database, lease: configuration.lease, maxAttempts: maxAttempts,
                              webhooks: configuration.webhooks)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: client)]
        if let endpoint {
            let outbox = QueueOutbox(client: client, logger: logger, timeout: database.callTimeout)
            services.append(.init(service: WebhookSender(endpoint: endpoint, outbox: outbox, clock: configuration.clock, logger: logger)))
        }
        self.services = services
    }

    /// A worker as a service whose end, however it comes (its store refuses it: exit 69), ends
    /// the whole process gracefully (`watch` and `worker` alike).
    static func service(_ worker: JobWorker) -> ServiceGroupConfiguration.ServiceConfiguration {
        .init(service: worker, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
    }
}

extension DatabaseURL {
    /// Applies the queue's migrations, the one way every command does: a database that cannot
    /// be reached or refuses is reported (exit 69) and nothing else happens. Returns the
    /// versions applied.
    @discardableResult
    func migrate(logger: Logger, json: Bool = false) async throws -> [Int] {
        do {
            return try await withClient(logger: logger) { try await QueueSchema.migrate($0, logger: logger) }
        } catch {
            throw Report.fail(QueueUnavailable(database: self, error: error), json: json)
        }
    }
}
