package ml.juno.engine.quantize;

import java.lang.foreign.MemorySegment;

/**
 * One tensor to write through {@link ParallelTensorWriter}: where its rows come from and what type they become.
 *
 * @param index  the tensor's index in the {@link GgufStreamWriter}'s tensor list
 * @param spec   its output type and shape
 * @param source its rows
 */
public record TensorWriteJob(int index, GgufStreamWriter.TensorSpec spec, Source source) {

    public TensorWriteJob {
        if (index < 0 || spec == null || source == null) {
            throw new IllegalArgumentException("job needs an index, a spec and a source");
        }
        if (source instanceof Source.Raw(MemorySegment data) && data.byteSize() != spec.byteSize()) {
            throw new IllegalArgumentException("tensor " + spec.name() + ": raw data has " + data.byteSize()
                    + " bytes, expected " + spec.byteSize());
        }
    }

    /** Where a tensor's rows come from. */
    public sealed interface Source {

        /** Bytes already in the output type, copied as they are. */
        record Raw(MemorySegment data) implements Source {
        }

        /** Float rows, converted to the output type by a {@link RowQuantizer}. */
        record Floats(FloatRows rows) implements Source {
        }
    }

    /**
     * Produces float rows of one tensor. Called from several threads at once with disjoint row ranges, so an
     * implementation must not share mutable state between calls.
     */
    @FunctionalInterface
    public interface FloatRows {
        /** Fills {@code dst[0 .. rowCount*rowLength)} with rows {@code firstRow ..} of the tensor. */
        void read(long firstRow, int rowCount, float[] dst);
    }
}
