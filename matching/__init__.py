"""MatchLens core: MV-LSTM and aMV-LSTM with one faithful explanation per forward pass.

This package never imports streamlit; the app's pages only draw what it returns.
"""

__version__ = "0.1.0"
