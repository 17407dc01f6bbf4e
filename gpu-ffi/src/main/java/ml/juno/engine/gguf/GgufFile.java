package ml.juno.engine.gguf;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import ml.juno.engine.kernel.HugeMemory;

/**
 * An open GGUF file (GGUF spec v2/v3): header, metadata and tensor table parsed and validated, tensor data left in
 * the memory-mapped file. {@link #data} hands out read-only slices of the mapping, so no weight is ever copied onto
 * the heap and tensors may exceed 2 GB. The slices are valid until {@link #close()}.
 */
public final class GgufFile implements AutoCloseable {

    private final Path path;
    private final Arena arena;
    private final MemorySegment segment;
    private final int version;
    private final long alignment;
    private final long dataOffset;
    private final GgufMetadata metadata;
    private final List<GgufTensorInfo> tensors;
    private final Map<String, GgufTensorInfo> byName;
    /** Memory for rearranged copies of tensor data ({@link #allocateCopy}), made on first use; freed by {@link #close()}. */
    private HugeMemory.Regions copies;

    private GgufFile(Path path, Arena arena, MemorySegment segment, GgufParser.Parsed p) throws GgufFormatException {
        GgufSanity.check(p.metadata()); // ids inside the vocabulary, hyper-parameters in sane bounds
        this.path = path;
        this.arena = arena;
        this.segment = segment;
        this.version = p.version();
        this.alignment = p.alignment();
        this.dataOffset = p.dataOffset();
        this.metadata = p.metadata();
        this.tensors = p.tensors();
        this.byName = HashMap.newHashMap(tensors.size());
        for (GgufTensorInfo t : tensors) {
            byName.put(t.name(), t);
        }
    }

    /**
     * Maps {@code path} read-only and parses it.
     *
     * @throws GgufFormatException when the file is not a valid GGUF
     * @throws IOException         when it cannot be opened or mapped
     */
    public static GgufFile open(Path path) throws IOException {
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            MemorySegment seg = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            return new GgufFile(path, arena, seg, GgufParser.parse(seg));
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Parses a GGUF image already in memory (no file; {@link #path()} is {@code null}). The segment must stay valid
     * while this object is used; {@link #close()} does not free it.
     */
    public static GgufFile read(MemorySegment image) throws GgufFormatException {
        MemorySegment ro = image.asReadOnly();
        return new GgufFile(null, null, ro, GgufParser.parse(ro));
    }

    public int version() {
        return version;
    }

    /** {@code general.alignment}, or 32. */
    public long alignment() {
        return alignment;
    }

    public Path path() {
        return path;
    }

    public long fileSize() {
        return segment.byteSize();
    }

    /** File offset of the tensor data section; tensor offsets are relative to it. */
    public long dataOffset() {
        return dataOffset;
    }

    public GgufMetadata metadata() {
        return metadata;
    }

    /** The tensor table, in file order. */
    public List<GgufTensorInfo> tensors() {
        return tensors;
    }

    public Optional<GgufTensorInfo> findTensor(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** @throws IllegalArgumentException {@code missing tensor NAME} */
    public GgufTensorInfo tensor(String name) {
        GgufTensorInfo t = byName.get(name);
        if (t == null) {
            throw new IllegalArgumentException("missing tensor " + name);
        }
        return t;
    }

    /** Read-only slice holding exactly {@code t}'s bytes. */
    public MemorySegment data(GgufTensorInfo t) {
        if (byName.get(t.name()) != t && !t.equals(byName.get(t.name()))) {
            throw new IllegalArgumentException("tensor " + t.name() + " is not from this file");
        }
        return segment.asSlice(dataOffset + t.offset(), t.byteSize());
    }

    /** The whole file, read-only. */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * {@code bytes} of off-heap memory, 64-byte aligned, that live as long as this file: for rearranged copies of its
     * tensors' data (a tensor-parallel column slice made contiguous), in transparent huge pages where the system allows
     * them (such copies are streamed every step), freed by {@link #close()} with the mapping.
     */
    public synchronized MemorySegment allocateCopy(long bytes) {
        if (copies == null) {
            copies = new HugeMemory.Regions(64L << 20);
        }
        return copies.allocate(bytes);
    }

    /** Unmaps the file and frees its {@link #allocateCopy copies}; slices handed out become invalid. */
    @Override
    public synchronized void close() {
        if (arena != null && arena.scope().isAlive()) {
            arena.close();
        }
        if (copies != null) {
            copies.close();
        }
    }

    @Override
    public String toString() {
        return "GgufFile[" + (path == null ? "<memory>" : path) + ", v" + version + ", " + metadata.size() + " keys, "
                + tensors.size() + " tensors]";
    }
}
