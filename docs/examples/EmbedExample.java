// Juno inside your own program. Run from the repository root after a build (./mvnw -B -DskipTests package):
//   java --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
//     -cp "coordinator-service/target/quarkus-app/app/*:coordinator-service/target/quarkus-app/lib/main/*" \
//     docs/examples/EmbedExample.java models/stories260K.gguf
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import ml.juno.embed.Juno;

public class EmbedExample {
    public static void main(String[] args) throws Exception {
        Path model = Path.of(args.length > 0 ? args[0] : "models/stories260K.gguf");
        try (Juno juno = Juno.local(model).temperature(0).maxTokens(32).build()) {
            System.out.println("chat: " + juno.chat("Once upon a time"));
            CountDownLatch done = new CountDownLatch(1);
            System.out.print("stream: ");
            juno.stream("Once upon a time").subscribe(new Flow.Subscriber<String>() {
                public void onSubscribe(Flow.Subscription s) { s.request(Long.MAX_VALUE); }
                public void onNext(String piece) { System.out.print(piece); }
                public void onError(Throwable t) { t.printStackTrace(); done.countDown(); }
                public void onComplete() { System.out.println(); done.countDown(); }
            });
            done.await();
        }
    }
}
