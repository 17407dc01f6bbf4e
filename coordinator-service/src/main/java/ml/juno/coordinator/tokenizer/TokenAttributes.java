package ml.juno.coordinator.tokenizer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Per-token attribute bits and the special-token facts llama.cpp derives at load time: EOT/EOM/FIM
 * detection by text, the end-of-generation set, the "unused" marking and model-specific strip flags.
 * Keeping these identical to llama.cpp keeps parse-special behaviour and stop tokens identical.
 */
final class TokenAttributes {
    static final int UNKNOWN = 1;
    static final int UNUSED = 1 << 1;
    static final int NORMAL = 1 << 2;
    static final int CONTROL = 1 << 3;
    static final int USER_DEFINED = 1 << 4;
    static final int BYTE = 1 << 5;
    static final int LSTRIP = 1 << 7;
    static final int RSTRIP = 1 << 8;

    private static final List<String> EOT_TEXTS = List.of("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
            "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
            "<end_of_utterance>");
    private static final List<String> EOM_TEXTS = List.of("<|eom_id|>");
    private static final List<String> FIM_PRE_TEXTS = List.of("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
            "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>");
    private static final List<String> FIM_SUF_TEXTS = List.of("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
            "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>");
    private static final List<String> FIM_MID_TEXTS = List.of("<|fim_middle|>", "<fim-middle>", "<fim_middle>",
            "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>");
    private static final List<String> FIM_PAD_TEXTS = List.of("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>",
            "[PAD]");
    private static final List<String> FIM_REP_TEXTS = List.of("<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
            "<REPO>", "<reponame>");
    private static final List<String> FIM_SEP_TEXTS = List.of("<|file_sep|>");
    /** Texts that end generation (llama.cpp's list). */
    private static final List<String> EOG_TEXTS = List.of("<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>",
            "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
            "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>",
            "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[");

    final int[] attrs;
    final int eot;
    final int[] eog;
    /** Ids of control, user-defined and unknown tokens, longest text first. */
    final int[] specialCache;

    TokenAttributes(Vocabulary v, TokenLookup lookup) {
        int n = v.size();
        attrs = new int[n];
        int[] types = v.tokens().types();
        for (int i = 0; i < n; i++) {
            attrs[i] = switch (TokenType.fromId(types[i])) {
                case UNKNOWN -> UNKNOWN;
                case UNUSED -> UNUSED;
                case NORMAL -> NORMAL;
                case CONTROL -> CONTROL;
                case USER_DEFINED -> USER_DEFINED;
                case BYTE -> BYTE;
                case UNDEFINED -> 0;
            };
        }
        int eotId = v.special().eot();
        if (eotId < 0) {
            eotId = detect(lookup, EOT_TEXTS);
        }
        eot = eotId;
        int eom = detect(lookup, EOM_TEXTS);
        for (List<String> fim : List.of(FIM_PRE_TEXTS, FIM_SUF_TEXTS, FIM_MID_TEXTS)) {
            detect(lookup, fim);
        }
        int fimPad = detect(lookup, FIM_PAD_TEXTS);
        int fimRep = detect(lookup, FIM_REP_TEXTS);
        int fimSep = detect(lookup, FIM_SEP_TEXTS);
        // control tokens whose text says "unused" are unused
        for (int i = 0; i < n; i++) {
            if ((attrs[i] & CONTROL) != 0 && v.tokens().texts().get(i).contains("unused")) {
                attrs[i] |= UNUSED;
            }
        }
        Set<Integer> eogSet = new LinkedHashSet<>();
        for (int id : new int[] {fimPad, fimRep, fimSep}) {
            if (id >= 0) {
                eogSet.add(id);
            }
        }
        for (String t : EOG_TEXTS) {
            int id = lookup.find(t);
            if (id >= 0) {
                eogSet.add(id);
                attrs[id] |= CONTROL;
            }
        }
        // gpt-oss: these structural tokens are always rendered
        for (String t : List.of("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")) {
            int id = lookup.find(t);
            if (id >= 0) {
                attrs[id] = USER_DEFINED;
            }
        }
        for (int id : new int[] {v.special().eos(), eotId, eom}) {
            if (id >= 0) {
                eogSet.add(id);
            }
        }
        int end = lookup.find("<|end|>");
        boolean harmony = (eogSet.contains(lookup.find("<|return|>")) && eogSet.contains(lookup.find("<|call|>")))
                || (eogSet.contains(lookup.find("<|calls|>")) && eogSet.contains(lookup.find("<|flush|>")));
        if (harmony && end >= 0 && eogSet.contains(end)) {
            eogSet.remove(end);
            attrs[end] = USER_DEFINED;
        }
        int s = lookup.find("</s>");
        if (s >= 0 && eogSet.contains(s) && eogSet.contains(lookup.find("<|tool_response>"))) {
            eogSet.remove(s);
            attrs[s] = NORMAL;
        }
        eog = eogSet.stream().mapToInt(Integer::intValue).sorted().toArray();

        List<Integer> special = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if ((attrs[i] & (CONTROL | USER_DEFINED | UNKNOWN)) != 0) {
                special.add(i);
            }
        }
        special.sort((a, b) -> Integer.compare(lookup.bytes(b).length, lookup.bytes(a).length));
        specialCache = special.stream().mapToInt(Integer::intValue).toArray();

        String name = v.kind().modelName().toLowerCase(Locale.ROOT);
        if (name.contains("phi-3") || name.contains("phi3")) {
            for (int id : specialCache) {
                attrs[id] |= RSTRIP;
            }
            setFlag(lookup, "</s>", RSTRIP, true);
            for (String t : List.of("<unk>", "<s>", "<|endoftext|>")) {
                setFlag(lookup, t, RSTRIP, false);
            }
        }
    }

    /** First listed text present in the vocabulary, forced to CONTROL as llama.cpp does; -1 if none. */
    private int detect(TokenLookup lookup, List<String> texts) {
        for (String t : texts) {
            int id = lookup.find(t);
            if (id >= 0) {
                attrs[id] |= CONTROL;
                return id;
            }
        }
        return -1;
    }

    private void setFlag(TokenLookup lookup, String text, int flag, boolean on) {
        int id = lookup.find(text);
        if (id >= 0) {
            attrs[id] = on ? attrs[id] | flag : attrs[id] & ~flag;
        }
    }

    boolean isEog(int id) {
        return Arrays.binarySearch(eog, id) >= 0;
    }
}
