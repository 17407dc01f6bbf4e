package ml.juno.engine.model.block;

/**
 * Where one MoE layer's routed experts come from during a step: the memory map (every expert always present) or an
 * expert store that reads the missing ones from the file into RAM slots ({@code ml.juno.engine.moe}). A step calls
 * {@link #begin} once with the routing, then {@link #await}/{@link #done} for each used expert in ascending expert id
 * (the compute order, fixed whatever order reads finish in), then {@link #end}, also when the step failed (in
 * {@link #begin} too). One
 * inference thread calls it.
 */
public interface ExpertSource {

    /**
     * A step of this layer starts: expert {@code e} is used by {@code expertStart[e+1] - expertStart[e]} rows of the
     * batch ({@code e < experts}); a store may start reading every missing one now.
     */
    void begin(int[] expertStart, int experts);

    /** Expert {@code e}'s FFN with its bytes present (waits for them); only for experts {@link #begin} listed, in ascending order. */
    GatedFfn await(int e);

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
