"""The house's walls: layers, the import graph, the install, the engine without the app."""
