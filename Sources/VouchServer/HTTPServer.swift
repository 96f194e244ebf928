internal import CMicroHTTPD
internal import Foundation

/// A request as the server hands it to its ``HTTPHandler``.
public struct HTTPRequest: Sendable {
    /// The method, as sent (`GET`, `POST`).
    public var method: String
    /// The path, without the query, percent-decoded.
    public var path: String
    /// The query's arguments by name, percent-decoded (the last of a repeated one).
    public var query: [String: String]
    /// The headers by name in lower case (the last of a repeated one).
    public var headers: [String: String]
    /// The body: empty until it was read whole.
    public var body: [UInt8]

    /// A request of these parts.
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// A response of the server.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The body's media type.
    public var contentType: String
    /// The body.
    public var body: [UInt8]
    /// Further headers, in order.
    public var headers: [Header]
    /// The stable code of what went wrong (what a log line and the metrics name), `nil` for
    /// success.
    public var code: String?

    /// A header's name and value.
    public struct Header: Sendable, Hashable {
        /// The name.
        public var name: String
        /// The value.
        public var value: String

        /// A header.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A response of these parts.
    public init(
        status: Int, contentType: String = "application/json", body: [UInt8], headers: [Header] = [],
        code: String? = nil
    ) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
        self.code = code
    }
}

/// What answers the requests of an ``HTTPServer``. Every method is called on the server's
/// threads, several at once.
public protocol HTTPHandler: AnyObject, Sendable {
    /// Looks at a request once its line and headers are in, before any of its body is read:
    /// a response refuses it there (a wrong method or path, a missing token, a body declared
    /// larger than the server reads), `nil` reads the body and hands the request to
    /// ``respond(to:)``.
    func screen(_ request: HTTPRequest, declaredLength: Int?) -> HTTPResponse?
    /// Answers a request whose body was read whole.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// What the log and the metrics say of a request whose body grew past the server's limit
    /// as it came (a body of unknown length): a response cannot go out while the body is still
    /// coming, so the connection is closed instead.
    func bodyTooLarge(_ request: HTTPRequest) -> HTTPResponse
    /// What the log and the metrics say of a request whose body was still coming when the
    /// server's timeout had passed since its headers: the connection is closed.
    func tooSlow(_ request: HTTPRequest) -> HTTPResponse
    /// Called once a request is over: `response` is what was sent, `nil` when the connection
    /// ended first (a client that stalled past the timeout or went away); `seconds` since its
    /// headers came in.
    func finished(_ request: HTTPRequest, response: HTTPResponse?, seconds: Double)
}

/// An HTTP/1.1 server on GNU libmicrohttpd: a listening socket of its own, a small pool of
/// threads that read and write the connections (each polling its own, with epoll where there is
/// one), and the limits that keep a hostile client cheap: a bounded number of connections, a
/// timeout on idle and slow ones, a bounded body.
///
/// Once a request's body is in, its connection is suspended and the request handed to one of
/// ``Configuration/threads`` worker threads, which calls ``HTTPHandler/respond(to:)`` and
/// resumes the connection with the answer: a handler may block (verify, wait for a commit)
/// without holding up the other connections its polling thread serves, and requests that
/// arrive together are answered together (their additions share a commit).
public final class HTTPServer: @unchecked Sendable {
    /// How the server listens and what it bounds.
    public struct Configuration: Sendable {
        /// The address to bind: an IPv4 or IPv6 address, or a name the resolver knows.
        public var host: String
        /// The port; 0 takes a free one (``HTTPServer/port`` says which).
        public var port: UInt16
        /// Worker threads answering requests whose body is in.
        public var threads: Int
        /// Connections held at once; further ones wait in the kernel's listen queue until one
        /// closes.
        public var maximumConnections: Int
        /// A connection idle or stalled this long is closed, and so is one whose request's body
        /// is not whole this long after its headers (a client sending a byte now and then).
        public var timeoutSeconds: Int
        /// The largest body read; a larger one is refused (``HTTPHandler/screen(_:declaredLength:)``
        /// when declared, ``HTTPHandler/bodyTooLarge(_:)`` as it comes).
        public var maximumBody: Int

        /// A configuration; the defaults bind loopback's port 8080 with 4 threads, 1,000
        /// connections, a 30-second timeout and 1 MiB bodies.
        public init(
            host: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = 4, maximumConnections: Int = 1000,
            timeoutSeconds: Int = 30, maximumBody: Int = 1 << 20
        ) {
            self.host = host
            self.port = port
            self.threads = threads
            self.maximumConnections = maximumConnections
            self.timeoutSeconds = timeoutSeconds
            self.maximumBody = maximumBody
        }
    }

    /// Why a server could not start.
    public struct StartError: Error, CustomStringConvertible, Sendable {
        /// Why, for people.
        public let description: String
    }

    /// The address bound, as a URL's authority would write it (`127.0.0.1:8080`, `[::1]:8080`).
    public let authority: String
    /// The port bound.
    public let port: UInt16
    private let configuration: Configuration
    private let handler: any HTTPHandler
    private var daemon: OpaquePointer?
    private var listener: Int32
    private let workers: Workers
    private let lock = NSCondition()
    private var inFlight = 0

    /// Binds the address and starts answering with `handler`.
    ///
    /// - Throws: ``StartError`` when the address cannot be resolved or bound (in use, not this
    ///   machine's, a port below 1024 without the privilege) or the server cannot start.
    public init(_ configuration: Configuration, handler: any HTTPHandler) throws(StartError) {
        self.configuration = configuration
        self.handler = handler
        workers = Workers(count: max(1, configuration.threads))
        let (socket, family) = try Self.listen(configuration.host, configuration.port)
        listener = socket
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        let bound: UInt16 =
            family == AF_INET6
            ? withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            : withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        port = bound
        authority = (configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host) + ":\(bound)"

        var flags =
            UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue) | UInt32(MHD_USE_AUTO.rawValue)
            | UInt32(MHD_USE_ITC.rawValue) | UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue)
        if family == AF_INET6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: MHD_OPTION.LISTEN_SOCKET, value: Int(socket), ptr_value: nil),
            MHD_OptionItem(
                option: MHD_OPTION.CONNECTION_LIMIT, value: max(1, configuration.maximumConnections), ptr_value: nil),
            MHD_OptionItem(
                option: MHD_OPTION.CONNECTION_TIMEOUT, value: max(1, configuration.timeoutSeconds), ptr_value: nil),
            MHD_OptionItem(
                option: MHD_OPTION.NOTIFY_COMPLETED, value: unsafeBitCast(completedCallback, to: Int.self),
                ptr_value: nil),
        ]
        // The polling threads only move bytes: one per core is plenty.
        let pollers = min(max(1, configuration.threads), ProcessInfo.processInfo.activeProcessorCount)
        if pollers > 1 {
            options.append(MHD_OptionItem(option: MHD_OPTION.THREAD_POOL_SIZE, value: pollers, ptr_value: nil))
        }
        options.append(MHD_OptionItem(option: MHD_OPTION.END, value: 0, ptr_value: nil))
        let context = Unmanaged.passUnretained(self).toOpaque()
        // The completion callback's context is the server too (an array item holds it).
        for index in options.indices where options[index].option == MHD_OPTION.NOTIFY_COMPLETED {
            options[index].ptr_value = context
        }
        daemon = options.withUnsafeMutableBufferPointer {
            vouch_mhd_start(flags, accessCallback, context, $0.baseAddress)
        }
        guard daemon != nil else {
            workers.stop()
            close(socket)
            throw StartError(description: "libmicrohttpd could not start a server on \(authority)")
        }
    }

    deinit {
        stop(within: 0)
    }

    /// Stops: accepts no connection from now on, waits up to `seconds` for the requests in
    /// flight to be answered, lets the workers finish what they hold (a request being answered
    /// is answered), then closes every connection and joins the threads.
    public func stop(within seconds: Double) {
        lock.lock()
        guard let daemon else {
            lock.unlock()
            return
        }
        self.daemon = nil
        lock.unlock()
        let quiesced = MHD_quiesce_daemon(daemon)
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        while inFlight > 0, lock.wait(until: deadline) {}
        lock.unlock()
        // No connection may be resumed once the daemon is gone: the workers finish first, and a
        // request that comes later on an open connection is answered on its polling thread.
        workers.stop()
        MHD_stop_daemon(daemon)
        if quiesced >= 0 { close(quiesced) } else if listener >= 0 { close(listener) }
        listener = -1
    }

    /// Requests begun and not yet over.
    public var requestsInFlight: Int {
        lock.lock()
        defer { lock.unlock() }
        return inFlight
    }

    // MARK: Listening

    private static func listen(_ host: String, _ port: UInt16) throws(StartError) -> (Int32, Int32) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        #if os(Linux)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw StartError(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var failure = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            let info = current.pointee
            let socket = Foundation.socket(info.ai_family, info.ai_socktype, info.ai_protocol)
            guard socket >= 0 else {
                failure = String(cString: strerror(errno))
                continue
            }
            var one: Int32 = 1
            setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            _ = fcntl(socket, F_SETFD, FD_CLOEXEC)
            if bind(socket, info.ai_addr, info.ai_addrlen) == 0, Foundation.listen(socket, 1024) == 0 {
                return (socket, info.ai_family)
            }
            failure = String(cString: strerror(errno))
            close(socket)
        }
        throw StartError(description: "cannot listen on \(host):\(port): \(failure)")
    }

    // MARK: Requests

    /// One request's state between the handler's calls: created with the headers, released
    /// when the request is over. A worker hands its answer over under ``lock``.
    final class Exchange: @unchecked Sendable {
        var request: HTTPRequest
        var response: HTTPResponse?
        let started = ContinuousClock.now
        let lock = NSLock()
        /// The worker's answer, once it has one.
        var answer: HTTPResponse?
        /// Handed to a worker.
        var working = false

        init(_ request: HTTPRequest) {
            self.request = request
        }
    }

    /// A connection, handed to a worker to be resumed.
    struct Connection: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    fileprivate func access(
        _ connection: OpaquePointer, url: String, method: String, upload: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, context: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let stored = context.pointee else {
            let request = HTTPRequest(
                method: method, path: url, query: Self.values(connection, .GET_ARGUMENT_KIND, lowercased: false),
                headers: Self.values(connection, .HEADER_KIND, lowercased: true))
            let exchange = Exchange(request)
            lock.lock()
            inFlight += 1
            lock.unlock()
            context.pointee = Unmanaged.passRetained(exchange).toOpaque()
            let declared = request.headers["content-length"].flatMap { Int($0) }
            if let refusal = handler.screen(request, declaredLength: declared) {
                return send(refusal, for: exchange, on: connection)
            }
            return MHD_Result.YES
        }
        let exchange = Unmanaged<Exchange>.fromOpaque(stored).takeUnretainedValue()
        if exchange.response != nil {
            // Answered already (a refusal before the body): the rest of the body is dropped.
            uploadSize.pointee = 0
            return MHD_Result.YES
        }
        let size = uploadSize.pointee
        if size > 0, let upload {
            guard ContinuousClock.now - exchange.started <= .seconds(configuration.timeoutSeconds) else {
                exchange.response = handler.tooSlow(exchange.request)
                return MHD_Result.NO
            }
            guard exchange.request.body.count + size <= configuration.maximumBody else {
                // A response cannot go out while the body is still coming: the connection is
                // closed, and the refusal is what the log and the metrics say.
                exchange.response = handler.bodyTooLarge(exchange.request)
                return MHD_Result.NO
            }
            upload.withMemoryRebound(to: UInt8.self, capacity: size) {
                exchange.request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
            }
            uploadSize.pointee = 0
            return MHD_Result.YES
        }
        // The body is in: a worker answers, and the connection waits suspended meanwhile.
        exchange.lock.lock()
        let answer = exchange.answer
        let working = exchange.working
        exchange.working = true
        exchange.lock.unlock()
        if let answer { return send(answer, for: exchange, on: connection) }
        if working { return MHD_Result.YES }
        let handler = handler
        let suspended = Connection(pointer: connection)
        let handed = workers.submit(
            before: { MHD_suspend_connection(connection) },
            {
                let answer = handler.respond(to: exchange.request)
                exchange.lock.lock()
                exchange.answer = answer
                exchange.lock.unlock()
                MHD_resume_connection(suspended.pointer)
            })
        if handed { return MHD_Result.YES }
        return send(handler.respond(to: exchange.request), for: exchange, on: connection)
    }

    private func send(_ response: HTTPResponse, for exchange: Exchange, on connection: OpaquePointer) -> MHD_Result {
        exchange.response = response
        guard let made = response.body.withUnsafeBytes({ vouch_mhd_response($0.baseAddress, $0.count) }) else {
            return MHD_Result.NO
        }
        defer { MHD_destroy_response(made) }
        MHD_add_response_header(made, "Content-Type", response.contentType)
        for header in response.headers { MHD_add_response_header(made, header.name, header.value) }
        return MHD_queue_response(connection, UInt32(response.status), made)
    }

    fileprivate func completed(_ context: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        guard let context, let stored = context.pointee else { return }
        context.pointee = nil
        let exchange = Unmanaged<Exchange>.fromOpaque(stored).takeRetainedValue()
        let elapsed = ContinuousClock.now - exchange.started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        handler.finished(exchange.request, response: exchange.response, seconds: seconds)
        lock.lock()
        inFlight -= 1
        if inFlight == 0 { lock.broadcast() }
        lock.unlock()
    }

    /// The values of one kind (headers, query arguments) of a request, by name.
    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercased: Bool)
        -> [String: String]
    {
        final class Box {
            var values: [String: String] = [:]
            let lowercased: Bool
            init(lowercased: Bool) { self.lowercased = lowercased }
        }
        let box = Box(lowercased: lowercased)
        withExtendedLifetime(box) {
            _ = MHD_get_connection_values(
                connection, kind,
                { context, _, key, value in
                    guard let context, let key else { return MHD_Result.YES }
                    let box = Unmanaged<Box>.fromOpaque(context).takeUnretainedValue()
                    let name = String(cString: key)
                    box.values[box.lowercased ? name.lowercased() : name] = value.map { String(cString: $0) } ?? ""
                    return MHD_Result.YES
                }, Unmanaged.passUnretained(box).toOpaque())
        }
        return box.values
    }
}

/// The threads that answer requests whose body is in.
final class Workers: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var head = 0
    private var stopping = false
    private var running = 0
    /// Threads that have begun waiting for work, at their own priority.
    private var ready = 0

    /// Starts `count` threads and returns once each has lowered its priority and waits for work.
    init(count: Int) {
        running = count
        for index in 0..<count {
            let thread = Thread { [self] in work() }
            thread.name = "vouch-serve-\(index)"
            thread.start()
        }
        condition.lock()
        while ready < count { condition.wait() }
        condition.unlock()
    }

    /// Queues `work`, calling `before` first under the queue's lock; `false` (and neither is
    /// called) once the workers are stopping.
    func submit(before: () -> Void, _ work: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        before()
        queue.append(work)
        condition.signal()
        return true
    }

    /// How far below the process's priority request threads run (nice steps): the thread that
    /// commits (``Committer``) keeps it, so verifying requests never holds a commit up that
    /// requests wait for. Five steps give it three times a request thread's share of a core.
    static let lowering: Int32 = 5

    /// Lowers the calling thread's priority by ``lowering`` steps (Linux; elsewhere threads
    /// keep the process's). A failure leaves the priority as it is.
    private static func lowerPriority() {
        #if os(Linux)
            _ = vouch_lower_thread_priority(lowering)
        #endif
    }

    /// Refuses new work, lets the workers finish every item queued, and waits for them to end.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func work() {
        Self.lowerPriority()
        condition.lock()
        ready += 1
        condition.broadcast()
        while true {
            if head < queue.count {
                let item = queue[head]
                head += 1
                if head > 1024, head * 2 > queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
                condition.unlock()
                item()
                condition.lock()
            } else if stopping {
                break
            } else {
                condition.wait()
            }
        }
        running -= 1
        condition.broadcast()
        condition.unlock()
    }
}

/// libmicrohttpd's access handler: the server is its context.
private let accessCallback: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, upload, uploadSize, requestContext in
    guard let context, let connection, let url, let method, let uploadSize, let requestContext else {
        return MHD_Result.NO
    }
    return Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().access(
        connection, url: String(cString: url), method: String(cString: method), upload: upload,
        uploadSize: uploadSize, context: requestContext)
}

/// libmicrohttpd's completion callback: the server is its context.
private let completedCallback: MHD_RequestCompletedCallback = { context, _, requestContext, _ in
    guard let context else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(requestContext)
}
