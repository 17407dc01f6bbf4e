package ml.juno.coordinator.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One chat-template rendering: messages → prompt text. */
@Name(TemplateFormatEvent.NAME)
@Label("Template Format")
@Category({"Juno", "Coordinator"})
@StackTrace(false)
public final class TemplateFormatEvent extends Event {
    public static final String NAME = "juno.TemplateFormat";
    private static final TemplateFormatEvent PROBE = new TemplateFormatEvent();

    @Label("Template")
    String template;

    @Label("Messages")
    int messages;

    @Label("Characters")
    @Description("Length of the rendered prompt")
    int characters;

    /** A started event, or {@code null} when no recording wants it. */
    public static TemplateFormatEvent startIfEnabled() {
        if (!PROBE.isEnabled()) {
            return null;
        }
        TemplateFormatEvent e = new TemplateFormatEvent();
        e.begin();
        return e;
    }

    /** Ends and commits; a {@code null} event (recording off) is ignored. Returns {@code rendered}. */
    public static String finish(TemplateFormatEvent e, String template, int messages, String rendered) {
        if (e != null) {
            e.end();
            if (e.shouldCommit()) {
                e.template = template;
                e.messages = messages;
                e.characters = rendered.length();
                e.commit();
            }
        }
        return rendered;
    }
}
