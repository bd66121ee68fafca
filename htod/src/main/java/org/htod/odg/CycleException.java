package org.htod.odg;

import java.util.List;
import org.htod.core.HtodException;

/**
 * An edge was refused because it would close a cycle; nothing of the change that asked for it
 * was written. {@link #cycle()} names the cycle, in the direction "uses": each node uses the next,
 * and the last is the first again.
 */
public final class CycleException extends HtodException {
    private static final long serialVersionUID = 1L;
    private final String[] cycle; // an array, which serializes as the exception does

    CycleException(List<String> cycle) {
        super("refused: the edge would close a cycle: " + String.join(" uses ", cycle));
        this.cycle = cycle.toArray(new String[0]);
    }

    /** The nodes of the cycle, each using the next; the first and the last are the same node. */
    public List<String> cycle() {
        return List.of(cycle);
    }
}
