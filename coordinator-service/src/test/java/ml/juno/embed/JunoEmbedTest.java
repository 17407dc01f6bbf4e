package ml.juno.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The embedding API on the bundled model: chat, stream (the same text in pieces), conversations, embed, bad settings. */
class JunoEmbedTest {
    static final Path MODEL = Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf");

    @Test
    void chatAndStream_giveTheSameGreedyAnswer_andConversationsUseTheTemplate() throws Exception {
        try (Juno juno = Juno.local(MODEL).threads(1).temperature(0).maxTokens(16).build()) {
            assertEquals("stories260K", juno.model());
            String answer = juno.chat("Once upon a time");
            assertFalse(answer.isEmpty());
            assertEquals(answer, juno.chat("Once upon a time"), "greedy: the same answer again");

            List<String> pieces = new ArrayList<>();
            CompletableFuture<Void> done = new CompletableFuture<>();
            juno.stream("Once upon a time").subscribe(new Flow.Subscriber<>() {
                @Override
                public void onSubscribe(Flow.Subscription s) {
                    s.request(Long.MAX_VALUE);
                }

                @Override
                public void onNext(String item) {
                    pieces.add(item);
                }

                @Override
                public void onError(Throwable t) {
                    done.completeExceptionally(t);
                }

                @Override
                public void onComplete() {
                    done.complete(null);
                }
            });
            done.get(60, TimeUnit.SECONDS);
            assertTrue(pieces.size() > 1, "streamed in pieces: " + pieces);
            assertEquals(answer, String.join("", pieces));

            String turn = juno.chat(List.of(Juno.Message.user("Once upon a time"), Juno.Message.assistant(answer), Juno.Message.user("And then?")));
            assertFalse(turn.isEmpty());
            assertThrows(IllegalArgumentException.class, () -> juno.chat(List.of()));
        }
        assertThrows(IllegalArgumentException.class, () -> Juno.local(MODEL).temperature(3).build());
        assertThrows(java.io.IOException.class, () -> Juno.local(Path.of("/no/such.gguf")).build());
    }

    @Test
    void embed_givesUnitVectors_theSameAloneAndTogether_andTheEnginesOwnForTheSameTokens() throws Exception {
        try (Juno juno = Juno.local(MODEL).threads(1).build()) {
            float[] one = juno.embed("Once upon a time");
            assertEquals(juno.embeddingLength(), one.length);
            double ss = 0;
            for (float x : one) {
                ss += (double) x * x;
            }
            assertEquals(1.0, Math.sqrt(ss), 1e-5);
            List<float[]> many = juno.embed(List.of("The little dog", "Once upon a time", "Tom ran"));
            assertEquals(3, many.size());
            org.junit.jupiter.api.Assertions.assertArrayEquals(one, many.get(1), 0f, "batched == alone");
            assertFalse(java.util.Arrays.equals(many.get(0), many.get(2)));
            assertThrows(IllegalArgumentException.class, () -> juno.embed(List.of("fine", "")));
            assertThrows(IllegalArgumentException.class, () -> juno.embed(List.of()));
        }
    }
}
