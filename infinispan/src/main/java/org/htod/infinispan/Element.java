package org.htod.infinispan;

/** The XML element of the store, {@code <htod-store>} inside {@code <persistence>}. */
enum Element {
    HTOD_STORE("htod-store");

    private final String name;

    Element(String name) {
        this.name = name;
    }

    /** Infinispan names configuration elements by their enum's {@code toString}. */
    @Override
    public String toString() {
        return name;
    }
}
