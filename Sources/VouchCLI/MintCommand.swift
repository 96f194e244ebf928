import Dispatch
import Foundation
import Vouch
import VouchMint

/// `vouch mint`: makes an Apple-shaped test PKI and App Store signed data signed by it.
///
/// Results go to stdout (or `--out FILE`); errors go to stderr as `Error: …` followed by the
/// usage. Exit status: 0 success, 64 usage error, 65 an input that is not what it should be (a
/// certificate, a key, a JSON payload), 66 an input that cannot be read, 70 an OpenSSL failure,
/// 73 an output that cannot be written.
enum MintCommand {
    static let usage = """
        Usage: vouch mint ca --out DIR [--xcode] [--not-before DATE] [--not-after DATE]
                             [--leaf-not-before DATE] [--leaf-not-after DATE]
                             [--no-leaf-oid] [--no-intermediate-oid]
               vouch mint KIND --ca DIR [--xcode] [--set FIELD=VALUE ...] [--unset FIELD ...]
                             [--payload FILE|-] [--count N] [--seed S] [--date DATE]
                             [--tamper DEFECT ...] [--out FILE]

        Mints test data shaped like Apple's. Nothing minted chains to Apple: a verifier accepts it
        only when given the minted root (or Xcode certificate) as its trust anchor. The private
        keys are written unencrypted and are for tests only.

        mint ca writes to DIR:
          root.der root.pem root.key.pem                 EC P-384, self-signed CA, certSign/cRLSign, SKI
          intermediate.der intermediate.pem intermediate.key.pem
                                                         EC P-384, CA pathlen 0, marker 1.2.840.113635.100.6.2.1
          leaf.der leaf.pem leaf.key.pem                 EC P-256, not a CA, digitalSignature,
                                                         marker 1.2.840.113635.100.6.11.1
          all signed ecdsa-with-SHA384; keys are PKCS #8 PEM with mode 0600. It prints the files.
          --xcode writes xcode.der xcode.pem xcode.key.pem instead: one self-signed P-256
          certificate "StoreKit Testing in Xcode", as Xcode's StoreKit testing uses.
          --not-before, --not-after    validity of every certificate (default: now, ten years;
                                       one year with --xcode)
          --leaf-not-before, --leaf-not-after
                                       the leaf's own validity, e.g. in the past for an expired leaf
          --no-leaf-oid, --no-intermediate-oid
                                       leave a marker extension out (data a verifier must refuse)

        KIND is transaction, renewal-info, notification, app-transaction or realtime-request.
          Signs realistic payloads with the leaf key of the CA in DIR (--xcode: the Xcode
          certificate in DIR; Xcode makes no notification or realtime-request data) and prints
          one compact JWS per line. A notification nests a signed transaction and, for
          subscriptions, signed renewal info made with the same chain and consistent ids.
          --set FIELD=VALUE   set a payload member; VALUE is JSON if it parses (990, true, null,
                              "123"), else text. FIELD may be a path: data.status, or
                              data.signedTransactionInfo.price inside a notification's nested
                              token. environment, bundleId, appAppleId, productId, type,
                              storefront, originalTransactionId, appTransactionId,
                              appAccountToken, signedDate, notificationType and subtype steer the
                              whole scenario (storefront=JPN prices in yen,
                              notificationType=REFUND makes a refund) and reach nested tokens.
          --unset FIELD       remove a payload member (a path as for --set)
          --payload FILE|-    sign this payload instead (- reads stdin); without --set, --unset or
                              --tamper its bytes are signed exactly, less trailing whitespace
          --count N           mint N distinct tokens (default 1)
          --seed S            a number or any text (default 1); the same seed, date, CA and
                              options give the same payloads (ECDSA signatures differ per run)
          --date DATE         tokens are signed at DATE or up to a day before it (default: now),
                              on the same side of the leaf's validity as DATE
          --tamper DEFECT     write broken tokens instead, each followed by a tab and the error
                              code a verifier must report. DEFECT is signature, payload or header
                              (bad_signature), chain (untrusted_chain: a leaf from another root),
                              alg (unsupported_algorithm: "alg":"HS256"), or all; repeatable.
                              With --count N, N tokens per defect.
          --out FILE          write the tokens to FILE instead of stdout

        DATE is 2025-03-01, 2025-03-01T12:30:00Z or 2025-03-01T12:30:00.250Z (UTC).

        Exit status: 0 success, 64 usage error, 65 invalid input, 66 unreadable input,
        70 OpenSSL failure, 73 cannot write output.
        """

    static func run(_ arguments: [String]) -> Int32 {
        var io = MintIO.standard
        return run(arguments, io: &io)
    }

    /// The command with its streams given, for tests.
    static func run(_ arguments: [String], io: inout MintIO) -> Int32 {
        do {
            if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
                io.output(Array((usage + "\n").utf8))
                return 0
            }
            var options = try MintOptions(arguments)
            if options.help {
                io.output(Array((usage + "\n").utf8))
                return 0
            }
            if options.subcommand == "ca" {
                return try makeAuthority(options, io: &io)
            }
            return try mintTokens(&options, io: &io)
        } catch let failure as MintUsageError {
            io.error(Array("Error: \(failure.message)\n\n\(usage)\n".utf8))
            return 64
        } catch let failure as MintError {
            let status: Int32
            switch failure.code {
            case .invalidOverride, .unsupported: status = 64
            case .invalidInput: status = 65
            case .unreadableInput: status = 66
            case .writeFailed: status = 73
            default: status = 70
            }
            let help = status == 64 ? "\n\(usage)\n" : ""
            io.error(Array("Error: \(failure.reason)\n\(help)".utf8))
            return status
        } catch {
            io.error(Array("Error: \(error)\n".utf8))
            return 70
        }
    }

    // MARK: ca

    private static func makeAuthority(_ options: MintOptions, io: inout MintIO) throws -> Int32 {
        guard let out = options.out else { throw MintUsageError("mint ca needs --out DIR") }
        let now = io.now()
        let notBefore = options.notBefore ?? Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let years = options.xcode ? 1 : 10
        let notAfter = options.notAfter ?? MintDate.adding(years: years, to: notBefore)
        guard notBefore < notAfter else { throw MintUsageError("--not-before must be earlier than --not-after") }
        let authority: MintAuthority
        if options.xcode {
            guard options.leafNotBefore == nil, options.leafNotAfter == nil, !options.noLeafOID, !options.noIntermediateOID
            else { throw MintUsageError("--xcode makes one certificate: leaf and marker options do not apply") }
            authority = try MintAuthority.generateXcode(validity: MintValidity(notBefore: notBefore, notAfter: notAfter))
        } else {
            let year: TimeInterval = 365 * 86_400
            var leafNotBefore = options.leafNotBefore ?? notBefore
            var leafNotAfter = options.leafNotAfter ?? notAfter
            if options.leafNotBefore == nil, leafNotBefore >= leafNotAfter {
                leafNotBefore = leafNotAfter.addingTimeInterval(-year)
            }
            if options.leafNotAfter == nil, leafNotAfter <= leafNotBefore {
                leafNotAfter = leafNotBefore.addingTimeInterval(year)
            }
            guard leafNotBefore < leafNotAfter else {
                throw MintUsageError("--leaf-not-before must be earlier than --leaf-not-after")
            }
            var settings = MintAuthorityOptions(validity: MintValidity(notBefore: notBefore, notAfter: notAfter))
            settings.leaf = MintValidity(notBefore: leafNotBefore, notAfter: leafNotAfter)
            settings.includeLeafMarker = !options.noLeafOID
            settings.includeIntermediateMarker = !options.noIntermediateOID
            authority = try MintAuthority.generate(settings)
        }
        let files = try authority.write(to: URL(fileURLWithPath: out, isDirectory: true))
        io.output(Array(files.map { $0.path + "\n" }.joined().utf8))
        return 0
    }

    // MARK: tokens

    private static func mintTokens(_ options: inout MintOptions, io: inout MintIO) throws -> Int32 {
        guard let kindName = options.subcommand, let kind = MintKind(rawValue: kindName) else {
            throw MintUsageError("unknown kind \"\(options.subcommand ?? "")\"; expected ca, "
                + MintKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard let directory = options.ca else { throw MintUsageError("mint \(kind.rawValue) needs --ca DIR") }
        if options.xcode && !kind.existsInXcode {
            throw MintUsageError("Xcode makes no \(kind.rawValue) data; --xcode applies to transaction, renewal-info and app-transaction")
        }
        if options.payload != nil && options.count != nil {
            throw MintUsageError("--payload signs one given payload; --count does not apply")
        }
        let authority = try MintAuthority.load(
            from: URL(fileURLWithPath: directory, isDirectory: true), style: options.xcode ? .xcode : .appStore)
        let signer = try MintSigner(authority: authority)
        let tamperer = options.tampers.isEmpty ? nil : try MintTamperer(signer: signer)
        let count = options.count ?? 1
        var sink = try MintSink(path: options.out, io: io)

        if let source = options.payload {
            var bytes = source == "-" ? io.readStandardInput() : try readFile(source)
            while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { bytes.removeLast() }
            if options.overrides.isEmpty && tamperer == nil {
                try sink.write(Array((try signer.sign(payloadBytes: bytes) + "\n").utf8))
                return try sink.finish()
            }
            var payload: JSONObject
            do {
                payload = try StrictJSON.parseObject(bytes)
            } catch {
                throw MintError(.invalidInput, "\(source == "-" ? "stdin" : source) is not a JSON object: \(error)")
            }
            for override in options.overrides { try override.apply(to: &payload) }
            try sink.write(Array(try line(payload, signer: signer, tamperer: tamperer, tampers: options.tampers).utf8))
            return try sink.finish()
        }

        let generator = MintGenerator(seed: options.seed ?? 1, date: options.date ?? io.now(), overrides: options.overrides)
        let tampers = options.tampers
        // Items are independent, so chunks are minted in parallel and written in order.
        let chunkSize = 256
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        var start = 0
        while start < count {
            let chunkCount = min(workers * 4, (count - start + chunkSize - 1) / chunkSize)
            let results = MintChunkResults(count: chunkCount)
            let batchStart = start
            DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
                let first = batchStart + chunk * chunkSize
                let last = min(count, first + chunkSize)
                var bytes: [UInt8] = []
                do {
                    for index in first..<last {
                        let payload = try generator.payload(kind, index: index, signer: signer)
                        bytes.append(contentsOf: try line(payload, signer: signer, tamperer: tamperer, tampers: tampers).utf8)
                    }
                    results.store(.success(bytes), at: chunk)
                } catch {
                    results.store(.failure(error), at: chunk)
                }
            }
            for result in results.take() {
                try sink.write(try result.get())
            }
            start = min(count, start + chunkCount * chunkSize)
        }
        return try sink.finish()
    }

    /// One output line: the token, or for each defect the broken token, a tab and its code.
    private static func line(
        _ payload: JSONObject, signer: MintSigner, tamperer: MintTamperer?, tampers: [MintTamper]
    ) throws(MintError) -> String {
        guard let tamperer else { return try signer.sign(payload: payload) + "\n" }
        var text = ""
        for tamper in tampers {
            text += try tamperer.token(tamper, payload: payload) + "\t" + tamper.expectedErrorCode + "\n"
        }
        return text
    }

    private static func readFile(_ path: String) throws(MintError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MintError(.unreadableInput, "cannot read \(path)")
        }
        return Array(data)
    }
}

/// The streams and clock `vouch mint` uses, replaceable in tests.
struct MintIO {
    var output: (_ bytes: [UInt8]) -> Void
    var error: (_ bytes: [UInt8]) -> Void
    var readStandardInput: () -> [UInt8]
    var now: () -> Date

    static var standard: MintIO {
        MintIO(
            output: { FileHandle.standardOutput.write(Data($0)) },
            error: { FileHandle.standardError.write(Data($0)) },
            readStandardInput: { Array(FileHandle.standardInput.readDataToEndOfFile()) },
            now: { Date() })
    }
}

/// Where tokens go: stdout, or a file created up front so an unwritable path fails early.
private struct MintSink {
    private let handle: FileHandle?
    private let path: String?
    private let output: ([UInt8]) -> Void

    init(path: String?, io: MintIO) throws(MintError) {
        self.path = path
        self.output = io.output
        guard let path else {
            handle = nil
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path)
        else { throw MintError(.writeFailed, "cannot create \(path)") }
        self.handle = handle
    }

    mutating func write(_ bytes: [UInt8]) throws(MintError) {
        guard let handle else {
            output(bytes)
            return
        }
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            throw MintError(.writeFailed, "cannot write \(path ?? ""): \(error.localizedDescription)")
        }
    }

    func finish() throws(MintError) -> Int32 {
        do {
            try handle?.close()
        } catch {
            throw MintError(.writeFailed, "cannot write \(path ?? ""): \(error.localizedDescription)")
        }
        return 0
    }
}

/// One slot per chunk, each written by exactly one worker; read after all workers finish.
private final class MintChunkResults: @unchecked Sendable {
    private var slots: [Result<[UInt8], any Error>?]
    private let lock = NSLock()

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    func store(_ result: Result<[UInt8], any Error>, at index: Int) {
        lock.lock()
        defer { lock.unlock() }
        slots[index] = result
    }

    func take() -> [Result<[UInt8], any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return slots.map { $0 ?? .success([]) }
    }
}

struct MintUsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// The parsed words after `mint`.
struct MintOptions {
    var subcommand: String?
    var help = false
    var out: String?
    var ca: String?
    var xcode = false
    var notBefore: Date?
    var notAfter: Date?
    var leafNotBefore: Date?
    var leafNotAfter: Date?
    var noLeafOID = false
    var noIntermediateOID = false
    var overrides: [MintOverride] = []
    var payload: String?
    var count: Int?
    var seed: UInt64?
    var date: Date?
    var tampers: [MintTamper] = []

    init(_ arguments: [String]) throws {
        var words = arguments[...]
        while let word = words.popFirst() {
            var name = word
            var inline: String? = nil
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inline = String(word[word.index(after: equals)...])
            }
            func value() throws -> String {
                if let inline { return inline }
                guard let next = words.popFirst() else { throw MintUsageError("\(name) needs a value") }
                return next
            }
            func date() throws -> Date {
                let text = try value()
                guard let date = MintDate.parse(text) else {
                    throw MintUsageError("\(name): \"\(text)\" is not a date such as 2025-03-01 or 2025-03-01T12:30:00Z")
                }
                return date
            }
            func flag() throws -> Bool {
                guard inline == nil else { throw MintUsageError("\(name) takes no value") }
                return true
            }
            switch name {
            case "--help", "-h": help = try flag()
            case "--out", "-o": out = try value()
            case "--ca": ca = try value()
            case "--xcode": xcode = try flag()
            case "--not-before": notBefore = try date()
            case "--not-after": notAfter = try date()
            case "--leaf-not-before": leafNotBefore = try date()
            case "--leaf-not-after": leafNotAfter = try date()
            case "--no-leaf-oid": noLeafOID = try flag()
            case "--no-intermediate-oid": noIntermediateOID = try flag()
            case "--set": overrides.append(try MintOverride(parsing: try value()))
            case "--unset": overrides.append(MintOverride(path: try MintOverride.path(try value()), value: nil))
            case "--payload": payload = try value()
            case "--count":
                let text = try value()
                guard let number = Int(text), number >= 1, number <= 100_000_000 else {
                    throw MintUsageError("--count: \"\(text)\" is not a number from 1 to 100000000")
                }
                count = number
            case "--seed": seed = MintGenerator.seed(try value())
            case "--date": self.date = try date()
            case "--tamper":
                for item in try value().split(separator: ",") {
                    if item == "all" {
                        tampers += MintTamper.allCases
                    } else if let tamper = MintTamper(rawValue: String(item)) {
                        tampers.append(tamper)
                    } else {
                        throw MintUsageError("--tamper: unknown defect \"\(item)\"; expected "
                            + MintTamper.allCases.map(\.rawValue).joined(separator: ", ") + " or all")
                    }
                }
            default:
                if word.hasPrefix("-") && word != "-" { throw MintUsageError("unknown option \(word)") }
                guard subcommand == nil else { throw MintUsageError("unexpected argument \"\(word)\"") }
                subcommand = word
            }
        }
        if subcommand == nil && !help { throw MintUsageError("missing ca or KIND") }
        let appliesToCA: [(String, Bool)] = [
            ("--ca", ca != nil), ("--set/--unset", !overrides.isEmpty), ("--payload", payload != nil),
            ("--count", count != nil), ("--seed", seed != nil), ("--date", date != nil), ("--tamper", !tampers.isEmpty),
        ]
        let appliesToKinds: [(String, Bool)] = [
            ("--not-before", notBefore != nil), ("--not-after", notAfter != nil), ("--leaf-not-before", leafNotBefore != nil),
            ("--leaf-not-after", leafNotAfter != nil), ("--no-leaf-oid", noLeafOID),
            ("--no-intermediate-oid", noIntermediateOID),
        ]
        if subcommand == "ca" {
            if let misplaced = appliesToCA.first(where: \.1) { throw MintUsageError("\(misplaced.0) does not apply to mint ca") }
        } else if let subcommand, let misplaced = appliesToKinds.first(where: \.1) {
            throw MintUsageError("\(misplaced.0) applies to mint ca, not mint \(subcommand)")
        }
        var seen = Set<MintTamper>()
        tampers = tampers.filter { seen.insert($0).inserted }
    }
}
