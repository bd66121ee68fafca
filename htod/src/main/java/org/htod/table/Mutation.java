package org.htod.table;

/**
 * The decision of an atomic update, made under the key's lock from the entry found (or null when
 * the key is absent or its entry has expired). Returns null to leave the key as it is, {@link
 * Change#REMOVE} to remove it, or {@link Change#put} to write a new value.
 */
@FunctionalInterface
public interface Mutation {
    Change apply(StoredEntry current);
}
