package org.htod.core.device;

import org.htod.core.HtodException;

/** Thrown by an armed {@link CrashDevice} at the write or sync where the simulated power loss happens, and after. */
public final class SimulatedCrashException extends HtodException {
    private static final long serialVersionUID = 1L;

    public SimulatedCrashException(String message) {
        super(message);
    }
}
