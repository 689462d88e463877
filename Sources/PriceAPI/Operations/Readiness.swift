import PriceDB

/// `/readyz` is ready when every migration this build ships is applied with the same checksum.
public struct Readiness: Sendable {
    let shipped: [MigrationFile]

    public init(shipped: [MigrationFile]) {
        self.shipped = shipped
    }

    /// nil when ready; otherwise a short reason for operators.
    func problem(applied: [AppliedMigration]) -> String? {
        let status = MigrationPlanner(files: shipped, applied: applied).status()
        if let name = status.pending.first { return "migration \(name) is not applied; run pricesvc migrate" }
        if let name = status.changed.first { return "migration \(name) differs from the applied one; run pricesvc migrate" }
        return nil
    }
}
