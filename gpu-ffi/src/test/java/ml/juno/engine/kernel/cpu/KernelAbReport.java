package ml.juno.engine.kernel.cpu;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kernel.WeightMatrix;

/**
 * A/B speed report for the CPU matmul kernels (a tool, not a test): two builds of the engine's classes ("old" and
 * "new", e.g. a {@code git worktree} of the base commit and this checkout) are loaded in two class loaders of one
 * JVM and timed alternately on the same weight matrix, so machine noise (this 2-vCPU VM varies by up to 2× between
 * JVM runs) hits both alike. Prints the median over rounds of each side's median time per call and the bytes one call
 * allocates (non-zero after warm-up means boxed vectors). Run after {@code test-compile}:
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:LoopUnrollLimit=300 \
 *   -cp gpu-ffi/target/test-classes:gpu-ffi/target/classes:$(deps) ml.juno.engine.kernel.cpu.KernelAbReport \
 *   OLD_CLASSES NEW_CLASSES MODEL.gguf TENSOR THREADS BATCHES(1,16,...) ROUNDS
 * </pre>
 *
 * Both loaders get this JVM's class path with the engine's {@code classes} folder replaced by OLD_CLASSES or
 * NEW_CLASSES. JVM flags and installed compiler directives apply to both sides. {@code -Djuno.ab.rows=N} times only the
 * first N rows (e.g. a matrix that stays in L2, to time the kernels' arithmetic alone).
 */
public final class KernelAbReport {

    /** One side: runs in the class loader of its build. */
    public static final class Side {
        private static CpuBackend backend;

        /** {@code {median ms per call, bytes allocated by one call}} over {@code measureNs} after {@code warmNs}. */
        public static double[] run(int threads, String file, String tensor, int batch, long warmNs, long measureNs) throws Exception {
            if (backend == null) {
                backend = new CpuBackend(threads);
            }
            try (GgufFile f = GgufFile.open(Path.of(file))) {
                GgufTensorInfo t = f.tensor(tensor);
                int rows = (int) Math.min(t.rowCount(), Long.getLong("juno.ab.rows", t.rowCount()));
                WeightMatrix w = WeightMatrix.dense(tensor, t.type(), f.data(t).asSlice(0, rows * t.type().byteSize(t.rowLength())),
                        rows, (int) t.rowLength());
                float[] x = new float[batch * w.cols()];
                java.util.Random r = new java.util.Random(1);
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) r.nextGaussian();
                }
                float[] out = new float[batch * w.rows()];
                for (long t0 = System.nanoTime(); System.nanoTime() - t0 < warmNs; ) {
                    backend.matmul(w, x, out, batch);
                }
                var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
                long a0 = mx.getTotalThreadAllocatedBytes();
                backend.matmul(w, x, out, batch);
                long alloc = mx.getTotalThreadAllocatedBytes() - a0;
                long[] times = new long[1 << 16];
                int n = 0;
                for (long t0 = System.nanoTime(); System.nanoTime() - t0 < measureNs && n < times.length; ) {
                    long s = System.nanoTime();
                    backend.matmul(w, x, out, batch);
                    times[n++] = System.nanoTime() - s;
                }
                Arrays.sort(times, 0, n);
                return new double[] {times[n / 2] / 1e6, alloc};
            }
        }
    }

    private KernelAbReport() {}

    public static void main(String[] a) throws Exception {
        if (a.length != 7) {
            System.err.println("usage: KernelAbReport OLD_CLASSES NEW_CLASSES MODEL.gguf TENSOR THREADS BATCHES ROUNDS");
            System.exit(2);
        }
        Path engineClasses = Path.of(WeightMatrix.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Method[] run = new Method[2];
        for (int v = 0; v < 2; v++) {
            List<URL> urls = new ArrayList<>();
            for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
                Path p = Path.of(entry).toAbsolutePath();
                urls.add((p.equals(engineClasses.toAbsolutePath()) ? Path.of(a[v]) : p).toUri().toURL());
            }
            ClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
            run[v] = loader.loadClass(Side.class.getName())
                    .getMethod("run", int.class, String.class, String.class, int.class, long.class, long.class);
        }
        int threads = Integer.parseInt(a[4]);
        int rounds = Integer.parseInt(a[6]);
        for (String b : a[5].split(",")) {
            int batch = Integer.parseInt(b);
            for (int v = 0; v < 2; v++) {
                run[v].invoke(null, threads, a[2], a[3], batch, 3_000_000_000L, 100_000_000L);
            }
            double[][] med = new double[2][rounds];
            double[] alloc = new double[2];
            for (int k = 0; k < rounds; k++) {
                for (int v = 0; v < 2; v++) {
                    double[] r = (double[]) run[v].invoke(null, threads, a[2], a[3], batch, 300_000_000L, 400_000_000L);
                    med[v][k] = r[0];
                    alloc[v] = Math.max(alloc[v], r[1]);
                }
            }
            Arrays.sort(med[0]);
            Arrays.sort(med[1]);
            double o = med[0][rounds / 2];
            double n = med[1][rounds / 2];
            System.out.printf("%s batch %d: old %.3f ms (%.0f B allocated)  new %.3f ms (%.0f B)  new/old speed %.2fx%n",
                    a[3], batch, o, alloc[0], n, alloc[1], o / n);
        }
        System.exit(0);
    }
}
