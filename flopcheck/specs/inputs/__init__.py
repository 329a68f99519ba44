"""The inputs of one forward of a model a library builds, one module per kind of model: a diffusers transformer
(diffusers.py, by its class's convention: conventions.py, rules.py), a diffusers autoencoder's half (vae.py), a text
encoder (text.py)."""
