import Foundation
import IngestdTesting
import Testing

/// docs/CLI.md says what the binary says: its command table names every subcommand `ingestd
/// --help` lists, its defaults table every option where it exists and the default the binary
/// has, its exit-status table every status of `ingestd --help`. The binary's side is its own
/// description of itself (swift-argument-parser's `--experimental-dump-help`) and its help text.
@Suite struct HelpDocsTests {
    /// One subcommand as the binary describes it: option name → default (nil when it has none).
    struct Command {
        var options: [String: String?]
    }

    static func binaryCommands() throws -> [String: Command] {
        let dump = try Tool.run(Paths.binary, ["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var commands: [String: Command] = [:]
        func visit(_ command: [String: Any], path: [String]) {
            let name = (path + [command["commandName"] as? String ?? ""]).joined(separator: " ")
            var options: [String: String?] = [:]
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                guard let preferred = argument["preferredName"] as? [String: Any], let option = preferred["name"] as? String else { continue }
                options["--" + option] = argument["defaultValue"] as? String
            }
            if command["shouldDisplay"] as? Bool ?? true { commands[name] = Command(options: options) }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] { visit(sub, path: path + [command["commandName"] as? String ?? ""]) }
        }
        for sub in (root["command"] as? [String: Any])?["subcommands"] as? [[String: Any]] ?? [] { visit(sub, path: []) }
        commands["help"] = nil
        return commands
    }

    /// The rows of the Markdown table under `## heading` (`#` for the page's first table).
    static func table(_ heading: String) throws -> [[String]] {
        let page = try String(contentsOfFile: "\(Paths.root)/docs/CLI.md", encoding: .utf8)
        let sections = page.components(separatedBy: "\n## \(heading)\n")
        let section: String = heading == "#" ? page : try #require(sections.dropFirst().first, "no section \(heading)")
        let lines = section.components(separatedBy: "\n").drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        return lines.dropFirst(2).map { (line: String) -> [String] in
            let cells = line.components(separatedBy: "|").dropFirst().dropLast()
            return cells.map { $0.trimmingCharacters(in: CharacterSet.whitespaces) }
        }
    }

    /// The `backticked` spans of a cell.
    static func code(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    @Test func theCommandTableNamesEverySubcommand() throws {
        let commands = try Self.binaryCommands()
        let documented = Set(try Self.table("#").flatMap { Self.code($0[0]) }.map { span in
            // `transcode INPUT --out OUT` → transcode; `db migrate` → db migrate.
            span.split(separator: " ").prefix { $0.first?.isLowercase ?? false }.joined(separator: " ")
        })
        let listed = Set(commands.keys).subtracting(["db"])  // `db` only groups `db migrate`
        #expect(documented == listed, "documented only: \(documented.subtracting(listed)); in the binary only: \(listed.subtracting(documented))")
    }

    @Test func everyDefaultIsTheBinarys() throws {
        let commands = try Self.binaryCommands()
        let rows = try Self.table("Defaults")
        #expect(rows.count > 15)
        for row in rows {
            let options = Self.code(row[0]).filter { $0.hasPrefix("--") }
            // Commands by name; "all with `--database`" or "all with `s3://`" names none.
            let groups = row[1].components(separatedBy: " / ").map { Self.code($0).filter { ($0.first?.isLetter ?? false) && $0.allSatisfy { $0.isLowercase || $0 == "-" || $0 == " " } } }
            let values = row[2].components(separatedBy: " / ")
            #expect(!options.isEmpty && (values.count == 1 || values.count == groups.count), "\(row)")
            for (index, group) in groups.enumerated() {
                let value = values.count == 1 ? values[0] : values[index]
                let perOption = value.components(separatedBy: "; ")
                // A group that names no command ("all with them") needs the option somewhere.
                let named = group.isEmpty ? commands.filter { command in options.allSatisfy { command.value.options.keys.contains($0) } }.map(\.key) : group
                #expect(!named.isEmpty, "\(row): no command has \(options)")
                for (position, option) in options.enumerated() {
                    let documented = perOption.count == options.count ? perOption[position] : value
                    for name in named {
                        let command = try #require(commands[name], "\(row): no command \(name)")
                        #expect(command.options.keys.contains(option), "\(name) has no \(option)")
                        guard let actual = command.options[option] ?? nil else { continue }
                        #expect(Self.documents(documented, actual), "\(name) \(option): the binary's default is \(actual), docs/CLI.md says \(documented)")
                    }
                }
            }
        }
    }

    /// Whether a defaults cell states `actual`: its first number equals a numeric default
    /// (`4 s (0: …)` for 4.0), else the text appears in it.
    static func documents(_ cell: String, _ actual: String) -> Bool {
        guard let number = Double(actual) else { return cell.contains(actual) }
        let first = cell.split { !($0.isNumber || $0 == ".") }.first.flatMap { Double($0) }
        return first == number
    }

    @Test func theExitStatusesAreTheBinarys() throws {
        let help = try Tool.run(Paths.binary, ["--help"]).stdout
        let section = try #require(help.components(separatedBy: "EXIT STATUS").dropFirst().first?.components(separatedBy: "USAGE:").first)
        let binary = Set(section.split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") ? line.split(separator: " ").first.flatMap { Int($0) } : nil
        })
        let documented = Set(try Self.table("Exit status").compactMap { Int($0[0]) })
        #expect(binary.count >= 10 && documented == binary, "docs/CLI.md: \(documented.sorted()); ingestd --help: \(binary.sorted())")
    }
}
