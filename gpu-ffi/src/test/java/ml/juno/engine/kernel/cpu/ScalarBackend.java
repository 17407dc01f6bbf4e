package ml.juno.engine.kernel.cpu;

import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kernel.GgmlExp;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvCache;

/** A single-threaded backend made of the scalar reference kernels: the yardstick for whole forward passes. */
public final class ScalarBackend implements Backend {
    private float[] rowBuf = new float[0];
    private float[] xr = new float[0];
    private float[] scores = new float[0];
    private final float[] lanes = new float[64];
    private QuantRow quantRow = new QuantRow(0);
    private final QuantActivations quantX = new QuantActivations();

    @Override
    public String name() {
        return "cpu-scalar";
    }

    @Override
    public int threads() {
        return 1;
    }

    @Override
    public void matmul(WeightMatrix w, float[] x, float[] out, int batch) {
        if (CpuTypeTraits.of(w.type()).quantized()) {
            if (quantRow.q.length < w.cols()) {
                quantRow = new QuantRow(w.cols());
            }
            ScalarKernels.matmulQuant(w, x, out, batch, quantRow, quantX);
            return;
        }
        if (rowBuf.length < w.cols()) {
            rowBuf = new float[w.cols()];
        }
        if (xr.length < batch * w.cols()) {
            xr = new float[batch * w.cols()];
        }
        ScalarKernels.matmul(w, x, out, batch, rowBuf, xr, lanes);
    }

    @Override
    public void embed(WeightMatrix table, int token, float[] out, int outOffset) {
        ScalarKernels.embed(table, token, out, outOffset);
    }

    @Override
    public void rmsNorm(float[] x, float[] weight, float eps, float[] out, int batch, int dim) {
        ScalarKernels.rmsNorm(x, weight, eps, out, batch, dim);
    }

    @Override
    public void rope(float[] x, RopeShape shape, int batch, float[] cos, float[] sin) {
        ScalarKernels.rope(x, shape, batch, cos, sin);
    }

    @Override
    public void attention(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out) {
        if (scores.length < cache.layout().contextLength() + GgmlExp.CHUNK) {
            scores = new float[cache.layout().contextLength() + GgmlExp.CHUNK];
        }
        ScalarKernels.attention(cache, layer, shape, rows, q, out, scores);
    }

    @Override
    public void swiglu(float[] gate, float[] up, int rows, int cols) {
        ScalarKernels.swiglu(gate, up, rows, cols);
    }

    @Override
    public void add(float[] acc, float[] x, int n) {
        ScalarKernels.add(acc, x, n);
    }

    @Override
    public void close() {}

    @Override
    public void addBias(float[] x, float[] bias, int rows, int width) {
        ScalarKernels.addBias(x, bias, rows, width);
    }

    @Override
    public void geglu(float[] gate, float[] up, int rows, int cols) {
        ScalarKernels.geglu(gate, up, rows * cols);
    }

    @Override
    public void attention(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out, int window) {
        if (scores.length < cache.layout().contextLength() + GgmlExp.CHUNK) {
            scores = new float[cache.layout().contextLength() + GgmlExp.CHUNK];
        }
        ScalarKernels.attention(cache, layer, shape, rows, q, out, scores, window);
    }
}
