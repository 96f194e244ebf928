internal import Foundation

/// What `GET /metrics` says, in Prometheus's text format (version 0.0.4): requests by endpoint
/// and status, refusals by code, deliveries seen before, commits, request durations as
/// histograms by endpoint, and the build. Counted under one lock; every name starts
/// `vouch_serve_`.
final class ServerMetrics: @unchecked Sendable {
    /// The upper bounds of the duration histograms' buckets, in seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Histogram {
        var counts = [Int](repeating: 0, count: ServerMetrics.buckets.count)
        var count = 0
        var sum = 0.0
    }

    private let lock = NSLock()
    private let version: String
    private var requests: [String: [Int: Int]] = [:]
    private var refusals: [String: Int] = [:]
    private var durations: [String: Histogram] = [:]
    private var duplicates = 0
    private var commits = 0
    private var committed = 0

    init(version: String) {
        self.version = version
    }

    /// Counts one request to `endpoint` (a route's pattern, or `other`), answered `status`
    /// (0 when the connection ended first) with `code`, in `seconds`.
    func request(endpoint: String, status: Int, code: String?, seconds: Double) {
        lock.lock()
        defer { lock.unlock() }
        requests[endpoint, default: [:]][status, default: 0] += 1
        if let code, status >= 400 || status == 0 { refusals[code, default: 0] += 1 }
        var histogram = durations[endpoint] ?? Histogram()
        histogram.count += 1
        histogram.sum += seconds
        for (index, bound) in Self.buckets.enumerated() where seconds <= bound { histogram.counts[index] += 1 }
        durations[endpoint] = histogram
    }

    /// Counts `additions` committed in one transaction, holding `duplicates` notifications
    /// the store had seen already (a sender's retries).
    func committed(_ additions: Int, duplicates: Int) {
        lock.lock()
        committed += additions
        self.duplicates += duplicates
        lock.unlock()
    }

    /// The text of `GET /metrics`, with `transactions` commits run so far.
    func text(transactions: Int) -> String {
        lock.lock()
        defer { lock.unlock() }
        var lines: [String] = []
        lines.append(
            "# HELP vouch_serve_requests_total Requests answered, by endpoint and status (0: the connection ended first)."
        )
        lines.append("# TYPE vouch_serve_requests_total counter")
        for endpoint in requests.keys.sorted() {
            for (status, count) in requests[endpoint]!.sorted(by: { $0.key < $1.key }) {
                lines.append("vouch_serve_requests_total{endpoint=\"\(endpoint)\",status=\"\(status)\"} \(count)")
            }
        }
        lines.append("# HELP vouch_serve_refusals_total Requests refused, by the error code answered.")
        lines.append("# TYPE vouch_serve_refusals_total counter")
        for (code, count) in refusals.sorted(by: { $0.key < $1.key }) {
            lines.append("vouch_serve_refusals_total{code=\"\(code)\"} \(count)")
        }
        lines.append("# HELP vouch_serve_duplicate_notifications_total Notifications stored before (a sender's retry).")
        lines.append("# TYPE vouch_serve_duplicate_notifications_total counter")
        lines.append("vouch_serve_duplicate_notifications_total \(duplicates)")
        lines.append("# HELP vouch_serve_stored_total Verified deliveries and purchases committed.")
        lines.append("# TYPE vouch_serve_stored_total counter")
        lines.append("vouch_serve_stored_total \(committed)")
        lines.append("# HELP vouch_serve_commits_total Store transactions run (several deliveries may share one).")
        lines.append("# TYPE vouch_serve_commits_total counter")
        lines.append("vouch_serve_commits_total \(transactions)")
        lines.append("# HELP vouch_serve_request_duration_seconds Time from a request's headers to its answer.")
        lines.append("# TYPE vouch_serve_request_duration_seconds histogram")
        for endpoint in durations.keys.sorted() {
            let histogram = durations[endpoint]!
            for (index, bound) in Self.buckets.enumerated() {
                lines.append(
                    "vouch_serve_request_duration_seconds_bucket{endpoint=\"\(endpoint)\",le=\"\(Self.number(bound))\"} \(histogram.counts[index])"
                )
            }
            lines.append(
                "vouch_serve_request_duration_seconds_bucket{endpoint=\"\(endpoint)\",le=\"+Inf\"} \(histogram.count)")
            lines.append(
                "vouch_serve_request_duration_seconds_sum{endpoint=\"\(endpoint)\"} \(Self.number(histogram.sum))")
            lines.append("vouch_serve_request_duration_seconds_count{endpoint=\"\(endpoint)\"} \(histogram.count)")
        }
        lines.append("# HELP vouch_serve_build_info The server's version.")
        lines.append("# TYPE vouch_serve_build_info gauge")
        lines.append("vouch_serve_build_info{version=\"\(version)\"} 1")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A number as Prometheus reads it, without an exponent for the buckets' bounds.
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.6f", value)
    }
}
