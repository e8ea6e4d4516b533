import Testing
@testable import Transcode

/// How the cores are shared between the rungs' libx264 encoders, which all run at once.
@Suite struct EncoderThreadsTests {
    @Test func coresAreSharedByPixelsRoundedUp() throws {
        let plan = try TranscodePlan.make(probe: probe(width: 1080, height: 1920), preset: .builtIn)
        #expect(Pipeline.encoderThreads(plan.encodedRungs, cores: 2) == [1, 1, 1, 2])
        #expect(Pipeline.encoderThreads(plan.encodedRungs, cores: 16) == [1, 2, 5, 10])
        #expect(Pipeline.encoderThreads(plan.encodedRungs, cores: 1) == [1, 1, 1, 1])
        #expect(Pipeline.encoderThreads(plan.encodedRungs.dropLast(), cores: 2) == [1, 1, 2])
        // The pipeline shares by the whole ladder's pixels: a passed-through 1080p still counts,
        // so the app upload's 720p gets one thread where the encoded rungs alone would give it 2.
        let app = try TranscodePlan.make(probe: TopRungDecisionTests.app(), preset: .builtIn)
        #expect(app.passesTopRungThrough)
        #expect(Pipeline.encoderThreads(app.encodedRungs, cores: 2) == [1, 1, 2])
        #expect(Pipeline.encoderThreads(app.rungs[...], cores: 2).prefix(app.encodedRungs.count) == [1, 1, 1])
    }
}
