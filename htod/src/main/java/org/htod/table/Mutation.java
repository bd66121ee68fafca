package org.htod.table;

/**
 * The decision of an atomic update, made under the key's lock from the entry found (or null when
 * the key is absent or its entry has expired). Returns null to leave the key as it is, {@link
 * Change#REMOVE} to remove it, or {@link Change#put} to write a new value.
 */
@FunctionalInterface
public interface Mutation {
    Change apply(StoredEntry current);

    /**
     * Whether the decision needs the current entry's value. A blind write ({@link #blind}) does
     * not: it is handed the entry with a null value, and the value, which on a miss is read whole
     * from the device and checked, is not read at all; its version, expiry and presence still are.
     */
    default boolean readsValue() {
        return true;
    }

    /** {@code decide} as a blind write: decided without the current entry's value. */
    static Mutation blind(Mutation decide) {
        return new Mutation() {
            @Override
            public Change apply(StoredEntry current) {
                return decide.apply(current);
            }

            @Override
            public boolean readsValue() {
                return false;
            }
        };
    }
}
