package org.htod.core;

/**
 * The file or device under the store failed a sync, and refuses every sync since, until it is
 * opened again: writes made before the failed sync may be lost (Linux drops the pages whose
 * write-back failed and reports the error once to each descriptor), so no later sync may claim
 * them durable. Reads go on; changes are refused. Close the store (the close writes no clean
 * shutdown) and open it again: recovery replays the log from what the disk holds. (Linux may keep
 * the lost pages in its cache, clean, until they are evicted: dropping the cache or restarting the
 * machine before the reopen keeps recovery from reading them.)
 */
public final class DeviceFailedException extends HtodException {
    private static final long serialVersionUID = 1L;

    public DeviceFailedException(String message, HtodException firstFailure) {
        super(message + ": " + firstFailure.getMessage(), firstFailure);
    }
}
