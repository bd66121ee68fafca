package org.htod.infinispan;

import org.infinispan.persistence.spi.PersistenceException;

/**
 * Bytes in a store that do not follow the entry layout ({@link EntryLayout}) or the store's own
 * record of its segments: written by another program, by a newer layout, or damaged.
 */
public class EntryFormatException extends PersistenceException {
    private static final long serialVersionUID = 1L;

    public EntryFormatException(String message) {
        super(message);
    }
}
