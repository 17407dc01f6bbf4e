package ml.juno.engine.model;

import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.jfr.ForwardPassEvent;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kv.KvCache;
import ml.juno.engine.kv.KvLayout;
import ml.juno.engine.kv.KvPaging;
import ml.juno.engine.model.block.ForwardState;
import ml.juno.engine.step.SlotBlocks;
import ml.juno.engine.step.StepBatch;
import ml.juno.engine.step.StepRows;

/**
 * Runs forward steps of one {@link Model}: owns the KV cache ({@code maxSequences} slots × context, flat; or a block
 * pool reached through per-slot block tables, paged) and the preallocated buffers. {@link #forward} takes one
 * {@link StepBatch} and returns logits for the rows that asked; prompts go through in chunks of up to {@code maxBatch}
 * rows, never token by token. Not thread-safe: one inference thread.
 */
public final class InferenceSession implements AutoCloseable {
    private final Model model;
    private final DecoderModel decoder;
    private final Backend backend;
    private final KvCache cache;
    private final ForwardState state;
    private final Logits logits;
    private final float[] hidden;
    private final HiddenRows finalHidden;
    private final int dim;
    private final int vocab;
    private final int slots;
    private final int context;
    private StepBatch.Builder scratchBatch;

    InferenceSession(Model model) {
        this(model, null);
    }

    /** {@code paging == null}: flat KV cache. */
    InferenceSession(Model model, KvPaging paging) {
        this.model = model;
        this.decoder = model.decoder();
        this.backend = model.backend();
        ModelConfig c = model.config();
        EngineOptions o = model.options();
        this.dim = c.dims().embedding();
        this.vocab = c.dims().vocab();
        this.slots = o.maxSequences();
        this.context = model.contextLength();
        KvLayout layout = new KvLayout(decoder.shard().layerCount(), slots, context, decoder.kvDim(), o.kvType());
        this.cache = paging == null ? new KvCache(layout) : new KvCache(layout, paging);
        this.state = new ForwardState(o.maxBatch(), decoder.bufferSizes(), decoder.routing());
        this.logits = new Logits(vocab, o.maxBatch());
        this.hidden = new float[o.maxBatch() * dim];
        this.finalHidden = new HiddenRows(dim, o.maxBatch());
    }

    public int contextLength() {
        return context;
    }

    /** The model's backend, which runs this session's steps. */
    public Backend backend() {
        return backend;
    }

    public int maxBatch() {
        return state.capacity;
    }

    public int slots() {
        return slots;
    }

    public Model model() {
        return model;
    }

    public boolean isPaged() {
        return cache.isPaged();
    }

    /** Off-heap bytes of the KV cache. */
    public long kvBytes() {
        return cache.totalBytes();
    }

    /**
     * Paged sessions: the block table of {@code slot} for the next {@link #forward} calls (logical block {@code i <
     * count} → physical block {@code blocks[i]}; copied). Every row's position must be covered by its slot's table.
     */
    public void setBlockTable(int slot, int[] blocks, int count) {
        cache.setBlockTable(slot, blocks, count);
    }

    /**
     * Hidden states {@code [row][embedding]}: the input of a non-first pipeline shard (write before {@link #forward}),
     * the output of a non-last one (read after).
     */
    public float[] hiddenStates() {
        return state.x;
    }

    /**
     * The final hidden states (after the output norm) of the rows the last {@link #forward} asked for with {@code
     * needsHidden}; empty after a step that asked for none, or on a shard without the output head. Overwritten by the
     * next step.
     */
    public HiddenRows finalHidden() {
        return finalHidden;
    }

    /**
     * One forward step: the block tables of {@code step} are set (paged sessions), then every row runs. Rows are checked
     * first (slot, position within the context and covered by its block table, token within the vocabulary on a shard
     * that embeds, batch size); nothing is computed when one is wrong. A shard that does not embed takes its rows'
     * input from {@link #hiddenStates()} and ignores token ids. Returns the logits of the rows that asked for them, or
     * {@code null} on a shard without the output head; the rows that asked for their final hidden state find it in
     * {@link #finalHidden()} (the output projection runs only for rows that want logits). Emits a {@code juno.ForwardPass} JFR event while a recording
     * has it enabled.
     */
    public Logits forward(StepBatch step) {
        for (SlotBlocks t : step.blockTables()) {
            cache.setBlockTable(t.slot(), t.blocks(), t.blocks().length);
        }
        StepRows rows = step.rows();
        if (!ForwardPassEvent.enabled()) {
            return forwardRows(rows);
        }
        ForwardPassEvent event = ForwardPassEvent.start();
        Logits out = forwardRows(rows);
        ShardSpec shard = decoder.shard();
        event.finish(rows.count(), out == null ? 0 : out.count(), shard.firstLayer(), shard.endLayer(),
                shard.tensorRank(), shard.tensorParts());
        return out;
    }

    private Logits forwardRows(StepRows batch) {
        int n = batch.count();
        if (n > state.capacity) {
            throw new IllegalArgumentException("batch of " + n + " rows exceeds the session's maximum of " + state.capacity);
        }
        boolean embeds = decoder.shard().embeds();
        if (embeds && !batch.hasTokens()) {
            throw new IllegalArgumentException("this shard embeds and needs one token id per row, got none for " + n + " rows");
        }
        int[] slotOf = batch.slots();
        int[] positionOf = batch.positions();
        int[] tokenOf = batch.tokenIds();
        for (int i = 0; i < n; i++) {
            int slot = slotOf[i];
            int pos = positionOf[i];
            if (slot >= slots) {
                throw new IllegalArgumentException("row " + i + ": sequence slot " + slot + " is outside 0.." + (slots - 1));
            }
            if (pos >= context) {
                throw new IllegalArgumentException("row " + i + ": position " + pos + " is outside the context of " + context + " tokens");
            }
            if (pos >= cache.coveredPositions(slot)) {
                throw new IllegalArgumentException("row " + i + ": position " + pos + " of slot " + slot
                        + " is not covered by its block table (" + cache.coveredPositions(slot) + " positions)");
            }
            if (embeds && (tokenOf[i] < 0 || tokenOf[i] >= vocab)) {
                throw new IllegalArgumentException("row " + i + ": token " + tokenOf[i] + " is outside the vocabulary of " + vocab);
            }
        }
        state.rows.clear();
        for (int i = 0; i < n; i++) {
            state.rows.add(slotOf[i], positionOf[i]);
            state.tokens[i] = embeds ? tokenOf[i] : 0;
            state.adapter[i] = batch.adapter(i);
        }
        finalHidden.clear();
        decoder.forwardLayers(backend, state, n, cache);
        if (!decoder.shard().isLast(model.config().dims().layers())) {
            if (batch.hiddenRows() > 0) {
                throw new IllegalStateException("final hidden states asked of a shard without the output norm (layers "
                        + decoder.shard().firstLayer() + ".." + decoder.shard().endLayer() + ")");
            }
            return null;
        }
        if (batch.hiddenRows() > 0) {
            float[] out = finalHidden.data();
            for (int i = 0; i < n; i++) {
                if (batch.needsHidden(i)) {
                    System.arraycopy(state.x, i * dim, out, finalHidden.add(i), dim);
                }
            }
            decoder.outputNorm(backend, out, finalHidden.count());
        }
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (batch.needsLogits()[i]) {
                System.arraycopy(state.x, i * dim, hidden, count * dim, dim);
                logits.setBatchRow(count, i);
                count++;
            }
        }
        float[] out = logits.reserve(count);
        if (count > 0) {
            decoder.head(backend, hidden, count, out);
        }
        return logits;
    }

    /**
     * Greedy generation in slot 0 from position 0: the prompt goes through in batched chunks, then {@code maxTokens}
     * tokens are chosen by argmax (EOS does not stop it). Step {@code k}'s top-{@code topK} logits are those of the
     * distribution that produced token {@code k}.
     */
    public GenerationResult generate(int[] promptTokens, int maxTokens, int topK) {
        if (promptTokens.length == 0) {
            throw new IllegalArgumentException("empty prompt");
        }
        if (promptTokens.length + maxTokens - 1 > context) {
            throw new IllegalArgumentException("prompt of " + promptTokens.length + " tokens plus " + maxTokens
                    + " new tokens does not fit the context of " + context + " tokens");
        }
        if (scratchBatch == null) {
            scratchBatch = new StepBatch.Builder(state.capacity);
        }
        if (cache.isPaged()) {
            coverSlotZero(promptTokens.length + maxTokens - 1);
        }
        StepBatch.Builder b = scratchBatch;
        Logits l = null;
        for (int start = 0; start < promptTokens.length; start += state.capacity) {
            int end = Math.min(promptTokens.length, start + state.capacity);
            b.clear();
            b.addPrompt(0, start, promptTokens, start, end, end == promptTokens.length);
            l = forward(b.build());
        }
        int[] out = new int[maxTokens];
        List<TopLogit[]> tops = new ArrayList<>(maxTokens);
        for (int k = 0; k < maxTokens; k++) {
            tops.add(l.top(0, topK));
            out[k] = l.argmax(0);
            if (k + 1 < maxTokens) {
                b.clear();
                b.add(0, promptTokens.length + k, out[k], true);
                l = forward(b.build());
            }
        }
        return new GenerationResult(out, tops);
    }

    /** Paged sessions: gives slot 0 the blocks 0, 1, … for {@code positions} positions. */
    private void coverSlotZero(int positions) {
        KvPaging p = cache.paging();
        int n = p.blocksFor(positions);
        if (n > p.numBlocks()) {
            throw new IllegalArgumentException(positions + " positions need " + n + " KV blocks; the pool has " + p.numBlocks());
        }
        int[] blocks = new int[n];
        for (int i = 0; i < n; i++) {
            blocks[i] = i;
        }
        cache.setBlockTable(0, blocks, n);
    }

    @Override
    public void close() {
        cache.close();
    }
}
