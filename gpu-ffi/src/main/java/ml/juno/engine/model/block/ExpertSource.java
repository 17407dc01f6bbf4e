package ml.juno.engine.model.block;

/**
 * Where one MoE layer's routed experts come from during a step: the memory map (every expert always present) or an
 * expert store that reads the missing ones from the file into RAM slots ({@code ml.juno.engine.moe}). A step calls
 * {@link #begin} once with the routing, then {@link #present}/{@link #await} and {@link #done} for each used expert,
 * in any order (each expert's result lands in its own rows, so the order never changes a value), then {@link #end},
 * also when the step failed (in {@link #begin} too). One inference thread calls it, but for {@link #awaitBytes}.
 */
public interface ExpertSource {

    /**
     * A step of this layer starts: expert {@code e} is used by {@code expertStart[e+1] - expertStart[e]} rows of the
     * batch ({@code e < experts}); a store may start reading every missing one now.
     */
    void begin(int[] expertStart, int experts);

    /**
     * After {@link #begin}: the layer's input {@code x} ({@code [batch][dim]}, the rows the router saw); a store may use
     * it to start reading the next layer's likely experts while this layer computes. Changes no value. Default: nothing.
     */
    default void ahead(float[] x, int batch) {}

    /**
     * Expert {@code e}'s FFN if its bytes are present now (never waits), else {@code null}; only for experts
     * {@link #begin} listed and not {@link #done} yet.
     */
    GatedFfn present(int e);

    /**
     * Expert {@code e}'s FFN with its bytes present (waits for them), or {@code null} when no memory is free to read it
     * into until experts held now are {@link #done}; only for experts {@link #begin} listed and not done yet.
     */
    GatedFfn await(int e);

    /**
     * Expert {@code e}'s FFN over the memory its bytes are arriving in (never waits), or {@code null} when it has no
     * memory yet ({@link #await} then reads it once memory frees); a thread computing with it calls
     * {@link #awaitBytes} first, and the inference thread calls {@link #await} before {@link #done} as for any other.
     * Only for experts {@link #begin} listed and not done. Default: {@link #present}.
     */
    default GatedFfn incoming(int e) {
        return present(e);
    }

    /**
     * Waits until the bytes of {@link #incoming}{@code (e)} have arrived; {@code false} when their read failed
     * ({@link #await} then says why). Any thread may call it, one thread per expert and step, while the inference
     * thread waits for the experts' products. Default: {@code true}.
     */
    default boolean awaitBytes(int e) {
        return true;
    }

    /** The step is done computing with expert {@code e}: its bytes may be reused. */
    void done(int e);

    /** The step of this layer is over (normally or by failure): nothing stays held for it. */
    void end();

    /** Every expert memory-mapped: what {@link MoeFfn} uses unless a store takes over. */
    static ExpertSource mapped(GatedFfn[] experts) {
        GatedFfn[] all = experts.clone();
        return new ExpertSource() {
            @Override
            public void begin(int[] expertStart, int n) {}

            @Override
            public GatedFfn present(int e) {
                return all[e];
            }

            @Override
            public GatedFfn await(int e) {
                return all[e];
            }

            @Override
            public void done(int e) {}

            @Override
            public void end() {}
        };
    }
}
