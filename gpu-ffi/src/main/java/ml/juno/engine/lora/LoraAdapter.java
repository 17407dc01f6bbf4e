package ml.juno.engine.lora;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import ml.juno.engine.model.block.Projection;

/**
 * A LoRA adapter: its header (what base it fits, rank, alpha, rsLoRA, how it was trained) and its factor pairs. The
 * scale of a pair of rank {@code r} is {@code alpha/r}, or {@code alpha/√r} with rsLoRA (Kalajdzievski 2023), so the
 * delta of a projection is {@code scale·B·A}. Every pair is checked against the base shapes here, so an adapter that
 * exists is one that fits its base.
 */
public record LoraAdapter(Header header, List<LoraPair> pairs) {

    /** The current {@code .lora} format version. */
    public static final int FORMAT_VERSION = 1;

    /**
     * The header: format version, base fingerprint, the targets adapted, the rank, alpha, rsLoRA scaling and the
     * training settings (free key/value pairs, e.g. {@code lr=2e-4}).
     */
    public record Header(int formatVersion, BaseFingerprint base, Set<Projection> targets, int rank, float alpha,
                         boolean rsLora, Map<String, String> training) {
        public Header {
            Objects.requireNonNull(base, "base");
            if (formatVersion != FORMAT_VERSION) {
                throw new IllegalArgumentException("LoRA format version " + formatVersion + " is not supported (this build reads "
                        + FORMAT_VERSION + ")");
            }
            if (rank <= 0) {
                throw new IllegalArgumentException("LoRA rank must be positive, got " + rank);
            }
            if (!Float.isFinite(alpha) || alpha <= 0f) {
                throw new IllegalArgumentException("LoRA alpha must be a positive number, got " + alpha);
            }
            if (targets.isEmpty()) {
                throw new IllegalArgumentException("a LoRA adapter needs at least one target");
            }
            targets = Collections.unmodifiableSet(EnumSet.copyOf(targets));
            training = Collections.unmodifiableMap(new LinkedHashMap<>(training));
        }

        /** The scale of a pair of rank {@code r}: {@code alpha/r}, or {@code alpha/√r} with rsLoRA. */
        public float scale(int r) {
            return rsLora ? (float) (alpha / Math.sqrt(r)) : alpha / r;
        }
    }

    public LoraAdapter {
        Objects.requireNonNull(header, "header");
        pairs = List.copyOf(pairs);
        var shapes = header.base().shapes();
        Set<String> seen = new java.util.HashSet<>();
        for (LoraPair p : pairs) {
            String name = LoraPair.name(p.layer(), p.target());
            if (p.layer() >= shapes.layers()) {
                throw new IllegalArgumentException("LoRA pair " + name + " is beyond the base's " + shapes.layers() + " layers");
            }
            if (!header.targets().contains(p.target())) {
                throw new IllegalArgumentException("LoRA pair " + name + " targets " + p.target().shortName
                        + ", which the header does not list (" + header.targets() + ")");
            }
            int[] d = LoraPair.dims(p.target(), shapes);
            if (p.in() != d[0] || p.out() != d[1]) {
                throw new IllegalArgumentException("LoRA pair " + name + " is " + p.in() + "→" + p.out() + ", the base's "
                        + p.target().shortName + " projection is " + d[0] + "→" + d[1]);
            }
            if (!seen.add(name)) {
                throw new IllegalArgumentException("LoRA pair " + name + " appears twice");
            }
        }
    }

    /** The pairs of model layer {@code layer}. */
    public List<LoraPair> layer(int layer) {
        List<LoraPair> out = new ArrayList<>();
        for (LoraPair p : pairs) {
            if (p.layer() == layer) {
                out.add(p);
            }
        }
        return out;
    }

    /** The pair of {@code layer}/{@code target}, or {@code null}. */
    public LoraPair pair(int layer, Projection target) {
        for (LoraPair p : pairs) {
            if (p.layer() == layer && p.target() == target) {
                return p;
            }
        }
        return null;
    }

    /**
     * Refuses this adapter on a base with another fingerprint, with a message naming both; {@code what} names the
     * adapter (its file).
     */
    public void checkBase(BaseFingerprint actual, String what) {
        if (!header.base().matches(actual)) {
            throw new IllegalArgumentException("LoRA adapter " + what + " was made for base " + header.base().describe()
                    + ", not for this model " + actual.describe());
        }
    }

    /** The dense delta {@code scale·B·A} of one pair, {@code [out][in]} (merging, tests). */
    public float[] delta(LoraPair p) {
        float s = header.scale(p.rank());
        float[] d = new float[p.out() * p.in()];
        for (int i = 0; i < p.out(); i++) {
            for (int j = 0; j < p.rank(); j++) {
                float bij = p.b()[i * p.rank() + j] * s;
                if (bij == 0f) {
                    continue;
                }
                int ao = j * p.in();
                int o = i * p.in();
                for (int k = 0; k < p.in(); k++) {
                    d[o + k] += bij * p.a()[ao + k];
                }
            }
        }
        return d;
    }
}
