"""The GitHub Action: inputs, the gate / promote / pin modes, and the real gate it runs."""
