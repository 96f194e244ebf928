import Foundation
import Vouch

enum Output {
    /// A file descriptor to write to.
    enum Stream: Int32 {
        case standardOutput = 1
        case standardError = 2
    }

    static func standard(_ text: String) {
        write(text + "\n", to: .standardOutput)
    }

    static func error(_ text: String) {
        write(text + "\n", to: .standardError)
    }

    @discardableResult
    static func write(_ text: String, to stream: Stream) -> Bool {
        write(bytes: Array(text.utf8), to: stream)
    }

    /// Writes all of `bytes`; `false` when the stream is closed or failing.
    @discardableResult
    static func write(bytes: [UInt8], to stream: Stream) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(stream.rawValue, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }

    /// Reads a whole input: a path, or standard input for `nil` and `-`. At most `limit` bytes
    /// are read; `nil` is returned in second place when there was more.
    static func readInput(_ path: String?, limit: Int) throws(InputError) -> (bytes: [UInt8], complete: Bool) {
        let handle: FileHandle
        if let path, path != "-" {
            guard let file = FileHandle(forReadingAtPath: path) else {
                throw InputError("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                throw InputError("cannot read \(path): it is a directory")
            }
            handle = file
        } else {
            handle = FileHandle.standardInput
        }
        var bytes: [UInt8] = []
        do {
            while bytes.count <= limit {
                guard let chunk = try handle.read(upToCount: 64 * 1024), !chunk.isEmpty else {
                    return (bytes, true)
                }
                bytes.append(contentsOf: chunk)
            }
        } catch {
            throw InputError("cannot read \(path ?? "standard input"): \(error.localizedDescription)")
        }
        return (Array(bytes.prefix(limit)), false)
    }

    /// Reads a certificate file (DER or PEM; a PEM file may hold several).
    static func readCertificates(_ path: String, option: String) throws -> [[UInt8]] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InputError("cannot read \(option) \(path)")
        }
        let certificates = CertificateFile.certificates(in: [UInt8](data))
        guard !certificates.isEmpty else {
            throw UsageError("\(option) \(path) holds no DER or PEM certificate")
        }
        return certificates
    }

    // MARK: Readable payloads

    /// Writes a JSON value as indented `name: value` lines; numbers of `…Date` members get
    /// their ISO-8601 form beside the raw milliseconds.
    static func describe(_ object: JSONObject, indent: Int, into lines: inout [String]) {
        let pad = String(repeating: "  ", count: indent)
        for member in object.members {
            switch member.value {
            case .object(let inner):
                lines.append("\(pad)\(member.name):")
                describe(inner, indent: indent + 1, into: &lines)
            case .array(let elements) where elements.contains(where: { $0.objectValue != nil }):
                lines.append("\(pad)\(member.name):")
                for (index, element) in elements.enumerated() {
                    if let inner = element.objectValue {
                        lines.append("\(pad)  [\(index)]")
                        describe(inner, indent: indent + 2, into: &lines)
                    } else {
                        lines.append("\(pad)  [\(index)] \(JSONWriter.string(element))")
                    }
                }
            default:
                lines.append("\(pad)\(member.name): \(scalar(member.value, name: member.name))")
            }
        }
    }

    static func scalar(_ value: JSONValue, name: String) -> String {
        let text = JSONWriter.string(value)
        if name.hasSuffix("Date"), case .number(let number) = value, let timestamp = Timestamp(rawValue: number) {
            return "\(text) (\(timestamp.iso8601))"
        }
        return text
    }
}
