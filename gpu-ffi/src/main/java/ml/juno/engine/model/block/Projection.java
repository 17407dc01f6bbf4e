package ml.juno.engine.model.block;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The seven matrix projections of a decoder layer, as LoRA adapters name them ({@code --targets q,k,v,o,gate,up,down}). */
public enum Projection {
    Q("q"), K("k"), V("v"), O("o"), GATE("gate"), UP("up"), DOWN("down");

    /** The name on the command line and in {@code .lora} files. */
    public final String shortName;

    Projection(String shortName) {
        this.shortName = shortName;
    }

    /** Whether the projection belongs to the feed-forward half (gate, up, down). */
    public boolean ffn() {
        return this == GATE || this == UP || this == DOWN;
    }

    /** {@code q}, {@code gate}, … (case-insensitive); anything else is refused with the list of known targets. */
    public static Projection parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (Projection p : values()) {
            if (p.shortName.equals(n)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown LoRA target '" + name + "'; known targets: q, k, v, o, gate, up, down");
    }

    /** A comma-separated list such as {@code q,v}; empty entries and duplicates are refused. */
    public static List<Projection> parseList(String list) {
        Set<Projection> out = new LinkedHashSet<>();
        for (String part : list.split(",", -1)) {
            if (part.isBlank()) {
                throw new IllegalArgumentException("empty LoRA target in '" + list + "'");
            }
            if (!out.add(parse(part))) {
                throw new IllegalArgumentException("LoRA target '" + part.trim() + "' named twice in '" + list + "'");
            }
        }
        return new ArrayList<>(out);
    }
}
