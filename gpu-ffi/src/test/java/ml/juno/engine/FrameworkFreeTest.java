package ml.juno.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.MethodTypeDesc;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;

/**
 * The engine is framework-free: no compiled class of gpu-ffi's {@code src/main} names gRPC, protobuf, Quarkus or
 * another framework anywhere in its constant pool (types, descriptors, strings), so it takes the step records as plain
 * JDK records and a framework never leaks in through a signature.
 */
class FrameworkFreeTest {
    private static final List<String> FORBIDDEN = List.of("io/grpc/", "com/google/protobuf/", "io/quarkus/",
            "io/smallrye/", "io/vertx/", "jakarta/");

    @Test
    void noMainClassReferencesAFramework() throws IOException, URISyntaxException {
        Path classes = Path.of(InferenceSession.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.isDirectory(classes), "expected the main classes in a directory, got " + classes);
        List<String> found = new ArrayList<>();
        int scanned = 0;
        boolean sawStepBatch = false;
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                ClassModel c = ClassFile.of().parse(Files.readAllBytes(p));
                scanned++;
                sawStepBatch |= c.thisClass().asInternalName().equals(StepBatch.class.getName().replace('.', '/'));
                found.addAll(references(c));
            }
        }
        assertTrue(scanned > 100 && sawStepBatch, "scanned " + scanned + " classes under " + classes);
        assertEquals(List.of(), found);
    }

    @Test
    void theScanSeesAReference() {
        byte[] bytes = ClassFile.of().build(ClassDesc.of("x.Probe"), b -> b.withMethodBody("m",
                MethodTypeDesc.of(ConstantDescs.CD_void, ClassDesc.of("io.grpc.Status")), ClassFile.ACC_STATIC,
                code -> code.return_()));
        assertEquals(List.of("x/Probe: (Lio/grpc/Status;)V"), references(ClassFile.of().parse(bytes)));
    }

    private static List<String> references(ClassModel c) {
        List<String> out = new ArrayList<>();
        for (PoolEntry e : c.constantPool()) {
            if (e instanceof Utf8Entry u) {
                String s = u.stringValue();
                String slashed = s.replace('.', '/');
                for (String f : FORBIDDEN) {
                    if (slashed.contains(f)) {
                        out.add(c.thisClass().asInternalName() + ": " + s);
                        break;
                    }
                }
            }
        }
        return out;
    }
}
