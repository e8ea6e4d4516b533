import ArgumentParser
import Foundation
import ObjectStorage

struct URLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "url",
        abstract: "Print a presigned GET URL for an object in a bucket (for a player, a CDN origin test, curl).",
        discussion: """
        The URL is signed with the credentials in the environment (AWS_ACCESS_KEY_ID, \
        AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION) and works for anyone who holds it \
        until it expires. Nothing is sent to the server: an object that does not exist gives a \
        URL that answers 404.

        Examples:
          ingestd url s3://media/abc123/v20261125T093000Z-1a2b3c4d/video.mp4
          ingestd url s3://media/abc123/current.json --expires 600 --s3-endpoint http://127.0.0.1:8333
        """)

    @Argument(help: "The object: s3://bucket/key.")
    var object: String

    @Option(help: ArgumentHelp("Seconds the URL stays valid (1 to 604800, 7 days).", valueName: "seconds"))
    var expires = 3600

    @OptionGroup var storage: StorageOption

    func validate() throws {
        guard (1...604_800).contains(expires) else { throw ValidationError("--expires must be 1 to 604800 seconds (S3 allows 7 days at most)") }
    }

    func run() async throws {
        let location: S3Location
        do {
            guard let parsed = try S3Location(url: object), !parsed.key.isEmpty else {
                throw ValidationError("\(object): not an object URL (s3://bucket/key)")
            }
            location = parsed
        } catch let error as S3Location.Invalid {
            throw Report.fail(error, json: false)
        }
        print(try storage.client().presignedURL(location, expires: expires).absoluteString)
    }
}
